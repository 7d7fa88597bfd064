package import NIOSSL

extension LocalCertificates {
    /// A server TLS configuration with this certificate, offering `applicationProtocols` by ALPN
    /// (`["h2"]` for APNs; `["h2", "http/1.1"]` for Google's endpoints).
    package func serverTLS(applicationProtocols: [String]) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = applicationProtocols
        return tls
    }
}

extension LocalCertificates {
    /// Whether `name` can go into the certificate as a DNS name: 1 to 253 letters, digits, `-`, `.`.
    package static func isDNSName(_ name: String) -> Bool {
        (1...253).contains(name.utf8.count)
            && name.utf8.allSatisfy {
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || (48...57).contains($0) || (97...122).contains($0 | 0x20)
            }
    }
}
