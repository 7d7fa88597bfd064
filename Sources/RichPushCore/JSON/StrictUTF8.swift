/// Bytes to `String` only when they are valid UTF-8, without `String(validating:as:)`: that
/// initialiser is generic, runs unspecialised from our modules and looked up type metadata on
/// every call (16 % of the device simulator's CPU in a fan-out, mostly reading pushes).
enum StrictUTF8 {
    static func string(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer(string)
    }

    static func string(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(string)
    }

    /// ASCII needs no check. Otherwise decoding replaces each invalid sequence with U+FFFD's
    /// bytes, which are themselves valid, so the input was valid exactly when decoding gives it
    /// back unchanged.
    static func string(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: buffer, as: UTF8.self)
        if buffer.allSatisfy({ $0 < 0x80 }) { return text }
        return text.utf8.elementsEqual(buffer) ? text : nil
    }
}
