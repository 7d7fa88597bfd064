/// One JSON string as the scanner found it: where its quotes are in the body, and its content
/// with the escapes decoded, each decoded byte mapped back to the body so an error inside an
/// expression can name its column.
struct JSONString: Sendable {
    /// From the opening quote to just past the closing one, in body bytes.
    let range: Range<Int>
    /// The content, escapes decoded, as UTF-8.
    let content: [UInt8]
    /// The body offset of each content byte, plus one for the closing quote at the end.
    let offsets: [Int]

    /// The body offset of content byte `index` (the closing quote past the end).
    func offset(_ index: Int) -> Int {
        offsets[min(max(index, 0), offsets.count - 1)]
    }

    var text: String { String(decoding: content, as: UTF8.self) }
}
