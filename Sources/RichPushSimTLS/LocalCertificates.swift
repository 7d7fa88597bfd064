import Crypto
package import Foundation
import SwiftASN1
import X509

/// A certificate authority and a server certificate for `localhost` and `127.0.0.1`, made when the
/// local APNs starts, so it speaks TLS as Apple does; clients trust the CA file it writes.
package struct LocalCertificates: Sendable {
    package let caPEM: String
    package let certificatePEM: String
    /// The server's private key (PKCS#8 PEM).
    package let privateKeyPEM: String

    /// `hosts` become DNS names, `addresses` (IPv4 dotted quads) IP addresses of the certificate.
    package static func generate(
        hosts: [String] = ["localhost"], addresses: [String] = ["127.0.0.1"],
        validFor: TimeInterval = 30 * 86400, now: Date = Date()
    ) throws -> LocalCertificates {
        let caKey = P256.Signing.PrivateKey()
        // A name of its own per CA: a client trusting two simulators' CAs from one file (APNs
        // production and sandbox) finds each issuer by name, and with one shared name it checked
        // a certificate against the wrong CA's key (BAD_SIGNATURE).
        let caName = try DistinguishedName {
            OrganizationName("RichPush")
            CommonName(
                "RichPush local APNs CA \(caKey.publicKey.x963Representation.prefix(9).dropFirst().map { String(format: "%02x", $0) }.joined())"
            )
        }
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(validFor),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        var names = hosts.map { GeneralName.dnsName($0) }
        for address in addresses {
            let octets = address.split(separator: ".").compactMap { UInt8($0) }
            guard octets.count == 4 else { throw LocalCertificatesError("'\(address)' is not an IPv4 address") }
            names.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(octets))))
        }
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(validFor),
            issuer: caName, subject: try DistinguishedName { CommonName(hosts.first ?? addresses.first ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
        return LocalCertificates(
            caPEM: try ca.serializeAsPEM().pemString, certificatePEM: try server.serializeAsPEM().pemString,
            privateKeyPEM: serverKey.pemRepresentation)
    }

    /// Writes `ca.pem`, `cert.pem` and `key.pem` (readable by the owner only) into `directory`.
    package func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(caPEM.utf8).write(to: directory.appendingPathComponent("ca.pem"))
        try Data(certificatePEM.utf8).write(to: directory.appendingPathComponent("cert.pem"))
        let key = directory.appendingPathComponent("key.pem")
        try Data(privateKeyPEM.utf8).write(to: key)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
    }
}

package struct LocalCertificatesError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
