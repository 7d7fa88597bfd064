# syntax=docker/dockerfile:1
# Build: the official Swift image on Ubuntu 22.04, whose libhiredis-dev is 0.14.1 as on Debian 12.
ARG SWIFT_VERSION=6.1
FROM swift:${SWIFT_VERSION}-jammy AS build
RUN apt-get update && apt-get install -y --no-install-recommends libhiredis-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Resolve dependencies in their own layer, so source edits do not refetch them.
COPY Package.swift ./
RUN swift package resolve
COPY . .
RUN swift build -c release --product richpush --static-swift-stdlib \
    && mkdir -p /out \
    && cp "$(swift build -c release --show-bin-path)/richpush" /out/ \
    && cp -R "$(swift build -c release --show-bin-path)"/*.resources /out/

# Run: a slim image with the binary, its resource bundle and libhiredis; openssl for the compose
# profile `apns` (apns-keygen makes a .p8 signing key, apns-sim's healthcheck checks its TLS).
FROM ubuntu:22.04
RUN apt-get update && apt-get install -y --no-install-recommends libhiredis0.14 ca-certificates curl openssl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 richpush
COPY --from=build /out/ /opt/richpush/
ENV PATH=/opt/richpush:$PATH
USER richpush
ENTRYPOINT []
CMD ["richpush", "--help"]
