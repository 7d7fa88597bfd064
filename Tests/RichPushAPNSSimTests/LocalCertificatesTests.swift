import Foundation
import RedisTestSupport
import RichPushAPNSSim
import RichPushSimTLS
import Testing

/// The local APNs's certificates, checked by openssl (an independent implementation).
@Suite("Local TLS certificates")
struct LocalCertificatesTests {
    static func openssl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runTool("/usr/bin/openssl", arguments)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func opensslVerifiesTheChainAndTheNames() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        try LocalCertificates.generate().write(to: directory)
        let ca = directory.appendingPathComponent("ca.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let verified = try await Self.openssl([
            "verify", "-CAfile", ca, "-verify_hostname", "localhost", "-verify_ip", "127.0.0.1", "-purpose", "sslserver", cert,
        ])
        #expect(verified.status == 0, "\(verified.output)")
        // A certificate from another CA does not verify: the check can fail.
        let other = directory.appendingPathComponent("other")
        try LocalCertificates.generate().write(to: other)
        let mismatched = try await Self.openssl(["verify", "-CAfile", other.appendingPathComponent("ca.pem").path, cert])
        #expect(mismatched.status != 0)
        let wrongHost = try await Self.openssl(["verify", "-CAfile", ca, "-verify_hostname", "api.push.apple.com", cert])
        #expect(wrongHost.status != 0)
        // apns-sim --cert-host apns-sim: a compose service name verifies too.
        let named = directory.appendingPathComponent("named")
        try LocalCertificates.generate(hosts: ["localhost", "apns-sim"]).write(to: named)
        let byService = try await Self.openssl([
            "verify", "-CAfile", named.appendingPathComponent("ca.pem").path, "-verify_hostname", "apns-sim",
            named.appendingPathComponent("cert.pem").path,
        ])
        #expect(byService.status == 0, "\(byService.output)")
        let key = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("key.pem").path)
        #expect((key[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
