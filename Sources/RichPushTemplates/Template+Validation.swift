extension Template {
    /// Properties standing in for any a send may carry: one a JSON number (so each lone
    /// `"#(prop)"` goes out bare), one every kind of text JSON must escape.
    private static let placeholders = ["40", "\"quoted\" \\ back\\slash \u{1}\u{1F}\n\t 'single' é\u{301} 😀 \u{2028} ~!*()"]

    /// Renders the body with each placeholder and checks the result is JSON. The compiler
    /// already writes only valid values in place of strings, so this is the second line: a
    /// mistake in the renderer is caught at registration, never on a device.
    func checkRendersValidJSON(maxDepth: Int) throws(TemplateError) {
        let bytes = Array(body.utf8)
        for placeholder in Self.placeholders {
            let properties = TemplateProperties(folded: Dictionary(uniqueKeysWithValues: propertyNames.map { ($0, placeholder) }))
            var rendered: [UInt8] = []
            var outputStarts: [Int] = []
            var warnings: [TemplateWarning] = []
            for index in program.instructions.indices {
                outputStarts.append(rendered.count)
                // Every property has a placeholder, and `.empty` never fails.
                try? run(index..<index + 1, into: &rendered, properties, missing: .empty, warnings: &warnings)
            }
            var scanner = JSONScanner(bytes: rendered, maxDepth: maxDepth)
            do {
                while try scanner.next() != nil {}
            } catch {
                throw TemplateError(
                    .invalidJSON, "the body does not render to valid JSON with placeholder values: \(error.message)",
                    pointer: error.pointer,
                    location: SourceLocation(offset: bodyOffset(ofOutput: error.location.offset, outputStarts), in: bytes))
            }
        }
    }

    /// The body byte that produced output byte `offset`: the same byte in copied body text,
    /// the start of the string value for a rendered one.
    private func bodyOffset(ofOutput offset: Int, _ outputStarts: [Int]) -> Int {
        guard let index = outputStarts.lastIndex(where: { $0 <= offset }) else { return 0 }
        let source = program.sources[index]
        if case .copy(let start, let end) = program.instructions[index], end <= body.utf8.count {
            return min(start + offset - outputStarts[index], end)
        }
        return source
    }
}
