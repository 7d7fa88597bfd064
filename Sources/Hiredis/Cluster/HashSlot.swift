/// Redis Cluster's key → slot function: CRC16 (XMODEM) of the key, or of its hash tag (the part
/// between the first `{` and the next `}`, when not empty), modulo 16384.
package enum HashSlot {
    package static let count = 16384

    package static func of(_ key: some Collection<UInt8>) -> Int {
        Int(crc16(tagged(key)) & 0x3FFF)
    }

    package static func of(_ key: String) -> Int { of(Array(key.utf8)) }

    /// The bytes hashed: the hash tag's content when the key has a non-empty one, else the key.
    static func tagged<C: Collection<UInt8>>(_ key: C) -> C.SubSequence {
        if let open = key.firstIndex(of: UInt8(ascii: "{")) {
            let afterOpen = key.index(after: open)
            if let close = key[afterOpen...].firstIndex(of: UInt8(ascii: "}")), close != afterOpen {
                return key[afterOpen..<close]
            }
        }
        return key[...]
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial 0), as Redis's crc16.c.
    package static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        bytes.withContiguousStorageIfAvailable { crc16(UnsafeRawBufferPointer($0)) } ?? Array(bytes).withUnsafeBytes { crc16($0) }
    }

    /// The CRC16 of a string's UTF-8 bytes, read in place: the generic walk over a String's
    /// UTF-8 view was 9 % of a fan-out worker's CPU (the hub's bucket of every push).
    package static func crc16(_ text: String) -> UInt16 {
        var text = text
        return text.withUTF8 { crc16(UnsafeRawBufferPointer($0)) }
    }

    package static func crc16(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            var crc: UInt16 = 0
            for byte in bytes {
                crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
            }
            return crc
        }
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}
