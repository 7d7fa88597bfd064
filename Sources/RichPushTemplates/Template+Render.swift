extension Template {
    /// Renders the payload for one device.
    package func render(_ properties: TemplateProperties, missing policy: MissingPropertyPolicy = .fail) throws(TemplateRenderError) -> RenderedTemplate {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(self.bytes.count + 32 * expressionCount)
        let warnings = try render(into: &bytes, properties, missing: policy)
        return RenderedTemplate(bytes: bytes, warnings: warnings)
    }

    /// Appends the payload for one device to `buffer` (reuse one buffer across devices to skip
    /// the allocations); on error `buffer` is left as it was.
    package func render(into buffer: inout [UInt8], _ properties: TemplateProperties, missing policy: MissingPropertyPolicy = .fail) throws(TemplateRenderError) -> [TemplateWarning] {
        let start = buffer.count
        var warnings: [TemplateWarning] = []
        do throws(TemplateRenderError) {
            for segment in segments {
                try render(segment, into: &buffer, properties, missing: policy, warnings: &warnings)
            }
        } catch {
            buffer.removeSubrange(start...)
            throw error
        }
        return warnings
    }

    func render(
        _ segment: Segment, into buffer: inout [UInt8], _ properties: TemplateProperties, missing policy: MissingPropertyPolicy,
        warnings: inout [TemplateWarning]
    ) throws(TemplateRenderError) {
        switch segment {
        case .raw(let range):
            buffer.append(contentsOf: bytes[range])
        case .value(let expression, _):
            if expression.numberWhenNumeric, case .property(let reference)? = expression.terms.first {
                let value = try resolve(reference, expression.pointer, properties, policy, &warnings)
                if JavaScriptNumber.matches(value) {
                    buffer.append(contentsOf: value.utf8)
                } else {
                    buffer.append(UInt8(ascii: "\""))
                    JSONEscaping.append(value, to: &buffer)
                    buffer.append(UInt8(ascii: "\""))
                }
                return
            }
            buffer.append(UInt8(ascii: "\""))
            for term in expression.terms {
                switch term {
                case .literal(let escaped):
                    buffer.append(contentsOf: escaped)
                case .property(let reference):
                    let value = try resolve(reference, expression.pointer, properties, policy, &warnings)
                    write(value, reference, expression.pointer, into: &buffer, &warnings)
                }
            }
            buffer.append(UInt8(ascii: "\""))
        }
    }

    /// The property's value from the send, else as the policy says.
    private func resolve(
        _ reference: PropertyReference, _ pointer: String, _ properties: TemplateProperties, _ policy: MissingPropertyPolicy,
        _ warnings: inout [TemplateWarning]
    ) throws(TemplateRenderError) -> String {
        if let value = properties.storage[reference.key] { return value }
        switch policy.kind {
        case .empty:
            warnings.append(TemplateWarning(.missingProperty, property: reference.name, pointer: pointer, message: "the property '\(reference.name)' is missing and was written as an empty string"))
            return ""
        case .fallback(let defaults):
            if let value = defaults.storage[reference.key] {
                warnings.append(TemplateWarning(.defaultUsed, property: reference.name, pointer: pointer, message: "the property '\(reference.name)' is missing; its default was used"))
                return value
            }
        case .fail:
            break
        }
        throw TemplateRenderError(.missingProperty, "the template needs the property '\(reference.name)', which the send does not carry", property: reference.name, pointer: pointer)
    }

    /// One call's value, as its function has it, inside a JSON string.
    private func write(_ value: String, _ reference: PropertyReference, _ pointer: String, into buffer: inout [UInt8], _ warnings: inout [TemplateWarning]) {
        switch reference.function {
        case .text:
            JSONEscaping.append(value, to: &buffer)
        case .clip(let limit):
            guard let cut = Clipping.cut(value, keeping: limit) else { return JSONEscaping.append(value, to: &buffer) }
            JSONEscaping.append(value[..<cut], to: &buffer)
            warnings.append(TemplateWarning(.truncated, property: reference.name, pointer: pointer, message: "the value of '\(reference.name)' was clipped to \(limit) characters"))
        case .ellipsis(let limit):
            guard let cut = Clipping.cutForEllipsis(value, limit: limit) else { return JSONEscaping.append(value, to: &buffer) }
            JSONEscaping.append(value[..<cut], to: &buffer)
            buffer.append(contentsOf: [UInt8(ascii: "."), UInt8(ascii: "."), UInt8(ascii: ".")])
            warnings.append(TemplateWarning(.truncated, property: reference.name, pointer: pointer, message: "the value of '\(reference.name)' was clipped to \(limit) characters with '...'"))
        case .uriEncoded:
            PercentEncoding.append(value, to: &buffer)
        }
    }
}
