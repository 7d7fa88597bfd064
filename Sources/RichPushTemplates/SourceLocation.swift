/// A position in a template body: line and column count from 1, the column in Unicode scalars
/// (what an editor shows for all but emoji), and the byte offset for tools.
package struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    package let line: Int
    package let column: Int
    /// Bytes (UTF-8) from the start of the body, from 0.
    package let offset: Int

    package init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// The location of byte `offset` in `bytes`; counted only when an error is reported.
    init(offset: Int, in bytes: [UInt8]) {
        let offset = min(max(offset, 0), bytes.count)
        var line = 1
        var column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // a continuation byte is not a new scalar
                column += 1
            }
        }
        self.init(line: line, column: column, offset: offset)
    }

    package var description: String { "line \(line), column \(column)" }
}
