import Foundation
import RichPushAPNSSim
import Testing

/// The local APNs's certificates, checked by openssl (an independent implementation).
@Suite("Local TLS certificates")
struct LocalCertificatesTests {
    static func openssl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func opensslVerifiesTheChainAndTheNames() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        try LocalCertificates.generate().write(to: directory)
        let ca = directory.appendingPathComponent("ca.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let verified = try Self.openssl(["verify", "-CAfile", ca, "-verify_hostname", "localhost", "-verify_ip", "127.0.0.1", "-purpose", "sslserver", cert])
        #expect(verified.status == 0, "\(verified.output)")
        // A certificate from another CA does not verify: the check can fail.
        let other = directory.appendingPathComponent("other")
        try LocalCertificates.generate().write(to: other)
        let mismatched = try Self.openssl(["verify", "-CAfile", other.appendingPathComponent("ca.pem").path, cert])
        #expect(mismatched.status != 0)
        let wrongHost = try Self.openssl(["verify", "-CAfile", ca, "-verify_hostname", "api.push.apple.com", cert])
        #expect(wrongHost.status != 0)
        let key = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("key.pem").path)
        #expect((key[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
