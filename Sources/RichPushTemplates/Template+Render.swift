extension Template {
    /// Renders the payload for one device.
    package func render(
        _ properties: TemplateProperties, missing policy: MissingPropertyPolicy = .fail
    ) throws(TemplateRenderError) -> RenderedTemplate {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(program.estimatedSize)
        let warnings = try render(into: &bytes, properties, missing: policy)
        return RenderedTemplate(bytes: bytes, warnings: warnings)
    }

    /// Appends the payload for one device to `buffer` (reuse one buffer across devices to skip
    /// the allocations); on error `buffer` is left as it was.
    package func render(
        into buffer: inout [UInt8], _ properties: TemplateProperties, missing policy: MissingPropertyPolicy = .fail
    ) throws(TemplateRenderError) -> [TemplateWarning] {
        let start = buffer.count
        var warnings: [TemplateWarning] = []
        do throws(TemplateRenderError) {
            try run(program.instructions.indices, into: &buffer, properties, missing: policy, warnings: &warnings)
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        return warnings
    }

    /// Runs `instructions[range]`; the validation runs them one at a time to place errors.
    func run(
        _ range: Range<Int>, into buffer: inout [UInt8], _ properties: TemplateProperties, missing policy: MissingPropertyPolicy,
        warnings: inout [TemplateWarning]
    ) throws(TemplateRenderError) {
        try program.code.withUnsafeBufferPointer { (code) throws(TemplateRenderError) in
            for index in range {
                switch program.instructions[index] {
                case .copy(let start, let end):
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: code[start..<end]))
                case .quote:
                    buffer.append(UInt8(ascii: "\""))
                case .property(let slot):
                    let reference = program.references[slot]
                    let value = try resolve(reference, properties, policy, &warnings)
                    write(value, reference, into: &buffer, &warnings)
                case .number(let slot):
                    let value = try resolve(program.references[slot], properties, policy, &warnings)
                    if JavaScriptNumber.matches(value) {
                        buffer.append(contentsOf: value.utf8)
                    } else {
                        buffer.append(UInt8(ascii: "\""))
                        JSONEscaping.append(value, to: &buffer)
                        buffer.append(UInt8(ascii: "\""))
                    }
                }
            }
        }
    }

    /// The property's value from the send, else as the policy says.
    private func resolve(
        _ reference: PropertyReference, _ properties: TemplateProperties, _ policy: MissingPropertyPolicy,
        _ warnings: inout [TemplateWarning]
    ) throws(TemplateRenderError) -> String {
        if let value = properties.storage[reference.key] { return value }
        switch policy.kind {
        case .empty:
            warnings.append(TemplateWarning(.missingProperty, property: reference.name, pointer: reference.pointer))
            return ""
        case .fallback(let defaults):
            if let value = defaults.storage[reference.key] {
                warnings.append(TemplateWarning(.defaultUsed, property: reference.name, pointer: reference.pointer))
                return value
            }
        case .fail:
            break
        }
        throw TemplateRenderError(
            .missingProperty, "the template needs the property '\(reference.name)', which the send does not carry",
            property: reference.name, pointer: reference.pointer)
    }

    /// One call's value, as its function has it, inside a JSON string.
    private func write(_ value: String, _ reference: PropertyReference, into buffer: inout [UInt8], _ warnings: inout [TemplateWarning]) {
        switch reference.function {
        case .text:
            JSONEscaping.append(value, to: &buffer)
        case .clip(let limit):
            guard let cut = Clipping.cut(value, limit: limit) else { return JSONEscaping.append(value, to: &buffer) }
            JSONEscaping.append(value[..<cut], to: &buffer)
            warnings.append(TemplateWarning(.truncated, property: reference.name, pointer: reference.pointer, limit: limit))
        case .ellipsis(let limit):
            guard let cut = Clipping.cut(value, limit: limit, reserve: 3) else { return JSONEscaping.append(value, to: &buffer) }
            JSONEscaping.append(value[..<cut], to: &buffer)
            buffer.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "."), UInt8(ascii: ".")])
            warnings.append(TemplateWarning(.truncated, property: reference.name, pointer: reference.pointer, limit: limit))
        case .uriEncoded:
            PercentEncoding.append(value, to: &buffer)
        }
    }
}
