package import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs and Web Push keys use it: APNs provider
/// tokens, the OAuth2 assertions of service accounts, VAPID tokens and subscription keys.
///
/// Written over bytes, not through Foundation's base64 and string replacing: a Web Push send
/// decodes a subscription's keys and a push service checks a VAPID token on every message, and
/// the string route cost a third of the simulator's CPU per push.
package enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// The 6-bit value of each byte, 0xFF for a byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let length = (input.count * 4 + 2) / 3
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { output in
            alphabet.withUnsafeBufferPointer { alphabet in
                var written = 0
                var index = 0
                while index + 3 <= input.count {
                    let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[written] = alphabet[Int(group >> 18 & 63)]
                    output[written + 1] = alphabet[Int(group >> 12 & 63)]
                    output[written + 2] = alphabet[Int(group >> 6 & 63)]
                    output[written + 3] = alphabet[Int(group & 63)]
                    written += 4
                    index += 3
                }
                let rest = input.count - index
                if rest > 0 {
                    let group = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                    output[written] = alphabet[Int(group >> 18 & 63)]
                    output[written + 1] = alphabet[Int(group >> 12 & 63)]
                    written += 2
                    if rest == 2 {
                        output[written] = alphabet[Int(group >> 6 & 63)]
                        written += 1
                    }
                }
                return written
            }
        }
    }

    /// nil for an empty part, padding, characters outside the alphabet, or a length no encoding
    /// has (4k + 1 characters).
    package static func decode(_ part: some StringProtocol) -> Data? {
        decodeBytes(part).map { Data($0) }
    }

    /// ``decode(_:)`` as bytes.
    package static func decodeBytes(_ part: some StringProtocol) -> [UInt8]? {
        let utf8 = part.utf8
        let count = utf8.count
        guard count > 0, count % 4 != 1 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        let decoded: Bool = values.withUnsafeBufferPointer { values in
            for byte in utf8 {
                let value = values[Int(byte)]
                guard value != 0xFF else { return false }
                accumulator = accumulator &<< 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                }
            }
            return true
        }
        return decoded ? bytes : nil
    }
}
