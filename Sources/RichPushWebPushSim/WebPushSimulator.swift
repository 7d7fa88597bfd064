/// `richpush webpush-sim`: a local push service (RFC 8030) that checks what the RFCs require.
enum WebPushSimulator {}
