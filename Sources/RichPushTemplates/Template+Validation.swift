extension Template {
    /// Properties standing in for any a send may carry: one a JSON number (so each lone
    /// `"#(prop)"` goes out bare), one every kind of text JSON must escape.
    private static let placeholders = ["40", "\"quoted\" \\ back\\slash \u{1}\u{1F}\n\t 'single' é\u{301} 😀 \u{2028} ~!*()"]

    /// Renders the body with each placeholder and checks the result is JSON. The compiler
    /// already writes only valid values in place of strings, so this is the second line: a
    /// mistake in the renderer is caught at registration, never on a device.
    func checkRendersValidJSON(maxDepth: Int) throws(TemplateError) {
        for placeholder in Self.placeholders {
            let properties = TemplateProperties(folded: Dictionary(uniqueKeysWithValues: propertyNames.map { ($0, placeholder) }))
            var rendered: [UInt8] = []
            var starts: [(output: Int, segment: Segment)] = []
            var warnings: [TemplateWarning] = []
            for segment in segments {
                starts.append((rendered.count, segment))
                // Every property has a placeholder, and `.empty` never fails.
                try? render(segment, into: &rendered, properties, missing: .empty, warnings: &warnings)
            }
            var scanner = JSONScanner(bytes: rendered, maxDepth: maxDepth)
            do {
                while try scanner.next() != nil {}
            } catch {
                let offset = bodyOffset(ofOutput: error.location.offset, starts: starts)
                throw TemplateError(
                    .invalidJSON, "the body does not render to valid JSON with placeholder values: \(error.message)",
                    pointer: error.pointer, location: SourceLocation(offset: offset, in: bytes))
            }
        }
    }

    /// The body byte that produced output byte `offset`: the same byte in a copied run, the
    /// start of the string value for a rendered one.
    private func bodyOffset(ofOutput offset: Int, starts: [(output: Int, segment: Segment)]) -> Int {
        guard let last = starts.last(where: { $0.output <= offset }) else { return 0 }
        switch last.segment {
        case .raw(let range): return min(range.lowerBound + offset - last.output, range.upperBound)
        case .value(_, let source): return source.lowerBound
        }
    }
}
