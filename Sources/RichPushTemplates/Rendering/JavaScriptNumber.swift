/// Whether a lone `"#(prop)"` goes out as a bare JSON number: when the whole value matches the
/// pattern Notification Hubs documents, `(0|([1-9][0-9]*))(\.[0-9]+)?((e|E)(+|-)?[0-9]+)?`.
/// No sign: `-1` stays a string, as the page's pattern has it. Every match is valid JSON.
enum JavaScriptNumber {
    static func matches(_ text: String) -> Bool {
        let bytes = text.utf8
        var index = bytes.startIndex
        func take(_ accept: (UInt8) -> Bool) -> Bool {
            guard index != bytes.endIndex, accept(bytes[index]) else { return false }
            index = bytes.index(after: index)
            return true
        }
        func takeDigits() -> Bool {
            guard take(isDigit) else { return false }
            while take(isDigit) {}
            return true
        }
        if !take({ $0 == UInt8(ascii: "0") }) {
            guard take({ (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) else { return false }
            while take(isDigit) {}
        }
        if take({ $0 == UInt8(ascii: ".") }), !takeDigits() { return false }
        if take({ $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            _ = take { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }
            guard takeDigits() else { return false }
        }
        return index == bytes.endIndex
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
