import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One element of a parsed SVG: its name and attributes, and the text directly inside it.
struct Element {
    var name: String
    var attributes: [String: String]
    var text = ""
}

/// Parses `xml` with Foundation's `XMLParser`: the elements in document order, or the parse
/// error if it is not well-formed.
func parseXML(_ xml: String) -> Result<[Element], ParseFailure> {
    let collector = ElementCollector()
    let parser = XMLParser(data: Data(xml.utf8))
    parser.delegate = collector
    guard parser.parse() else {
        return .failure(
            ParseFailure(
                description:
                    "\(parser.parserError.map { "\($0)" } ?? "unknown error") at line \(parser.lineNumber), column \(parser.columnNumber)"))
    }
    return .success(collector.elements)
}

struct ParseFailure: Error, CustomStringConvertible {
    var description: String
}

private final class ElementCollector: NSObject, XMLParserDelegate {
    var elements: [Element] = []
    private var open: [Int] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
        attributes attributeDict: [String: String] = [:]
    ) {
        open.append(elements.count)
        elements.append(Element(name: elementName, attributes: attributeDict))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let current = open.last { elements[current].text += string }
    }
}

extension String {
    /// Every `<svg …>…</svg>` of an HTML page (they are not nested there).
    var svgFragments: [String] {
        var fragments: [String] = []
        var rest = self[...]
        while let start = rest.range(of: "<svg"), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            fragments.append(String(rest[start.lowerBound..<end.upperBound]))
            rest = rest[end.upperBound...]
        }
        return fragments
    }

    /// The text between the first `open` and the next `close`.
    func between(_ open: String, _ close: String) -> String? {
        guard let start = range(of: open), let end = range(of: close, range: start.upperBound..<endIndex) else { return nil }
        return String(self[start.upperBound..<end.lowerBound])
    }
}

extension [Element] {
    /// The elements of the chart whose `data-chart` is `id` (its `<svg>` first), in order.
    func chart(_ id: String) -> [Element] {
        guard let start = firstIndex(where: { $0.name == "svg" && $0.attributes["data-chart"] == id }) else { return [] }
        let end = self[(start + 1)...].firstIndex { $0.name == "svg" } ?? endIndex
        return Array(self[start..<end])
    }

    /// The `data-values` of the series named `name`.
    func values(ofSeries name: String) -> String? {
        first { $0.attributes["class"] == "series" && $0.attributes["data-name"] == name }?.attributes["data-values"]
    }

    var bars: [Element] { filter { $0.attributes["class"] == "bar" } }
}
