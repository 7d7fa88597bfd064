import Foundation
import NIOPosix

/// A file read a line at a time (LF or CRLF), each line at most `maxLineBytes`, in chunks read on
/// NIO's blocking-I/O thread pool rather than the cooperative pool. For the bulk files of
/// `richpush apps nh-import`, which may hold millions of lines.
struct LineFile {
    let path: String
    let maxLineBytes: Int
    private let handle: FileHandle
    /// Bytes read and not yet returned: `buffer[start...]` (a chunk's lines are returned without
    /// moving the rest; what is left is moved once, when the next chunk is read).
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line ``next()`` returned last (from 1).
    private(set) var lineNumber = 0

    init(path: String, maxLineBytes: Int) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path)") }
        self.path = path
        self.maxLineBytes = maxLineBytes
        self.handle = handle
    }

    /// The next line without its line end; nil after the last.
    mutating func next() async throws -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[start..<newline])
                start = newline + 1
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                lineNumber += 1
                return try checked(line)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { (buffer, start) = ([], 0) }
                lineNumber += 1
                return try checked(Array(buffer[start...]))
            }
            guard buffer.count - start <= maxLineBytes else {
                throw CLIError("\(path):\(lineNumber + 1): the line is over \(maxLineBytes) bytes")
            }
            let handle = self.handle
            let chunk = try await NIOThreadPool.singleton.runIfActive { try handle.read(upToCount: 1 << 16) ?? Data() }
            buffer.removeFirst(start)
            start = 0
            if chunk.isEmpty { atEnd = true } else { buffer += chunk }
        }
    }

    func close() {
        try? handle.close()
    }

    private func checked(_ line: [UInt8]) throws -> [UInt8] {
        guard line.count <= maxLineBytes else { throw CLIError("\(path):\(lineNumber): the line is over \(maxLineBytes) bytes") }
        return line
    }
}
