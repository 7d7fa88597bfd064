import RichPushCore
import RichPushQueue
import RichPushTemplates

/// The template pushes of one batch: each distinct template body compiled once (the worker holds
/// no compiled form between batches), each (template, locale) rendered once, and each device's
/// push the rendered bytes over the request metadata of its platform's plain push.
///
/// A device whose template cannot be rendered (a property missing under `fail`, or in neither the
/// send nor the defaults under `fallback`) or renders over its platform's limit fails alone, with
/// the reason's code first: `template_missing_property: …`, `payload_too_large: …`.
struct TemplatePushes {
    /// Why one device gets no push.
    struct Failure: Error {
        let reason: String
    }

    private struct Compiled {
        let template: Template
        /// An APNs body with `aps.alert`: sent as an alert (priority 10), not a background push.
        let isAlert: Bool
    }

    private struct RenderKey: Hashable {
        let notification: Int
        let template: InstallationTemplate
        let locale: String?
        /// The limit and the headers that apply depend on it.
        let format: PushFormat
    }

    private var compiled: [String: Result<Compiled, TemplateError>] = [:]
    private var rendered: [RenderKey: Result<RenderedPush, Failure>] = [:]
    private struct ValuesKey: Hashable {
        let notification: Int
        let locale: String?
    }

    /// The properties for each (notification, locale), and the locale the chain chose.
    private var values: [ValuesKey: (properties: TemplateProperties, chosen: String?)] = [:]

    /// The most bytes a rendered template may have on each platform (APNs' payload, FCM's message,
    /// Web Push's plaintext).
    static func limit(_ format: PushFormat) -> Int { format.maxTemplateBytes }

    /// The template an installation gets for a send to `expression` (``Installation/template(for:)``).
    static func template(of installation: Installation, for expression: TagExpression) -> InstallationTemplate? {
        installation.template(for: expression)
    }

    /// `installation`'s push of `notification` rendered from `template`, with `plain` (its
    /// platform's plain push) giving the request metadata, and the template's `Headers` rendered
    /// and applied over it; `locale` is the one the locale chain chose for the device (nil: no
    /// property is localized), for its entry in the status.
    mutating func push(
        _ template: InstallationTemplate, for installation: Installation, of notification: RichNotification, properties: SendProperties,
        format: PushFormat, plain: RenderedPush, builtIns: [String: String]
    ) -> (push: Result<RenderedPush, Failure>, locale: String?) {
        let key = RenderKey(notification: notification.id, template: template, locale: installation.locale, format: format)
        let values = self.properties(key, properties, builtIns: builtIns)
        let locale = try? values.get().chosen
        if let done = rendered[key] { return (done, locale) }
        let result = values.flatMap { values in
            render(template, properties: values.properties, format: format, plain: plain, priority: notification.delivery.priority)
        }
        rendered[key] = result
        return (result, locale)
    }

    private mutating func render(
        _ template: InstallationTemplate, properties: TemplateProperties, format: PushFormat, plain: RenderedPush,
        priority: DeliveryOptions.Priority?
    ) -> Result<RenderedPush, Failure> {
        let compiled: Compiled
        switch compile(template.body) {
        case .success(let value): compiled = value
        case .failure(let error):
            // Checked at registration; a body refused now was stored by another build.
            return .failure(Failure(reason: "invalid_template: template '\(template.name)': \(error)"))
        }
        return render(compiled.template, template, properties: properties, format: format).flatMap { payload in
            var push = plain
            push.payload = format == .fcm ? Self.message(in: payload) : payload
            if format == .apns && compiled.isAlert {
                push.pushType = "alert"
                push.priority = priority == .normal ? 5 : 10
            }
            return applyHeaders(template, to: push, properties: properties, format: format)
        }
    }

    /// An FCM rendering's message: a body written as FCM HTTP v1's whole request, `{"message": {…}}`
    /// (as Notification Hubs' FCM v1 templates are), is that message; any other body is one already.
    static func message(in payload: [UInt8]) -> [UInt8] {
        guard payload.count > 12, case .object(let members)? = JSONValue.parse(payload), members.count == 1,
            case .object? = members["message"], let message = members["message"]
        else { return payload }
        var json = JSONWriter(capacity: payload.count)
        json.value(message)
        return json.bytes
    }

    /// The template's headers that `format` takes, rendered with the device's properties and
    /// applied to `push` (a header for another format is left out: the device's platform is
    /// routed through another adapter here); a value the platform would refuse fails the device.
    private mutating func applyHeaders(
        _ template: InstallationTemplate, to push: RenderedPush, properties: TemplateProperties,
        format: PushFormat
    ) -> Result<RenderedPush, Failure> {
        guard !template.headers.isEmpty || template.expiry != nil else { return .success(push) }
        var push = push
        let now = JobQueue.nowMilliseconds()
        for (name, value) in TemplateHeaders.ordered(template.headers) where TemplateHeaders.nameProblem(name, format: format) == nil {
            let text: String
            switch render(value, of: template, properties: properties, what: "header '\(name)'") {
            case .failure(let failure): return .failure(failure)
            case .success(let rendered): text = rendered
            }
            if let problem = TemplateHeaders.apply(name, text, to: &push, now: now) {
                return .failure(Failure(reason: "invalid_header: template '\(template.name)': \(problem)"))
            }
        }
        if let expiry = template.expiry {
            switch render(expiry, of: template, properties: properties, what: "expiry") {
            case .failure(let failure):
                return .failure(failure)
            case .success(let text):
                if let problem = TemplateExpiry.apply(text, to: &push) {
                    return .failure(Failure(reason: "invalid_expiry: template '\(template.name)': \(problem)"))
                }
                // Past already: not sent (APNs would be handed an expiration in the past).
                if !text.allSatisfy(\.isWhitespace), push.deadline <= now {
                    return .failure(Failure(reason: "expired: template '\(template.name)': its expiry \(text.prefix(40)) has passed"))
                }
            }
        }
        if let problem = TemplateHeaders.combinationProblem(push, format: format) {
            return .failure(Failure(reason: "invalid_header: template '\(template.name)': \(problem)"))
        }
        return .success(push)
    }

    /// A header's value or an expiry, rendered with the device's properties as a body's string
    /// value is (a literal as it is).
    private mutating func render(
        _ value: String, of template: InstallationTemplate, properties: TemplateProperties, what: String
    ) -> Result<String, Failure> {
        switch compile(TemplateHeaders.body(of: value)) {
        case .failure(let error):
            return .failure(Failure(reason: "invalid_header: template '\(template.name)': \(what): \(error)"))
        case .success(let compiled) where compiled.template.expressionCount == 0:
            return .success(value)
        case .success(let compiled):
            do {
                let output = try compiled.template.render(properties, missing: try policy(template)).bytes
                return .success(JSONValue.parse(output)?["v"]?.string ?? "")
            } catch {
                return .failure(Failure(reason: "\(error.code): template '\(template.name)': \(what): \(error.message)"))
            }
        }
    }

    private mutating func compile(_ body: String) -> Result<Compiled, TemplateError> {
        if let done = compiled[body] { return done }
        let result = Result { () throws(TemplateError) in
            let template = try Template(body)
            return Compiled(template: template, isAlert: JSONValue.parse(Array(body.utf8))?["aps"]?["alert"] != nil)
        }
        compiled[body] = result
        return result
    }

    /// The send's properties for the key's locale, with the rich push's own values over them.
    private mutating func properties(
        _ key: RenderKey, _ properties: SendProperties, builtIns: [String: String]
    )
        -> Result<(properties: TemplateProperties, chosen: String?), Failure>
    {
        let shared = ValuesKey(notification: key.notification, locale: key.locale)
        if let done = values[shared] { return .success(done) }
        var (merged, chosen) = properties.values(for: key.locale)
        for (name, value) in builtIns {
            merged = merged.filter { $0.key.lowercased() != name.lowercased() }
            merged[name] = value
        }
        do {
            let folded = (properties: try TemplateProperties(merged), chosen: chosen)
            values[shared] = folded
            return .success(folded)
        } catch {
            return .failure(Failure(reason: "\(error.code): \(error.message)"))
        }
    }

    private func policy(_ template: InstallationTemplate) throws(TemplateRenderError) -> MissingPropertyPolicy {
        switch template.missing {
        case .fail: .fail
        case .empty: .empty
        case .fallback: .fallback(try TemplateProperties(template.defaults))
        }
    }

    private func render(
        _ compiled: Template, _ template: InstallationTemplate, properties: TemplateProperties, format: PushFormat
    ) -> Result<[UInt8], Failure> {
        do {
            let bytes = try compiled.render(properties, missing: try policy(template)).bytes
            let limit = Self.limit(format)
            guard bytes.count <= limit else {
                return .failure(
                    Failure(
                        reason:
                            "payload_too_large: template '\(template.name)' rendered \(bytes.count) bytes; \(format.rawValue) accepts at most \(limit)"
                    ))
            }
            return .success(bytes)
        } catch {
            return .failure(Failure(reason: "\(error.code): template '\(template.name)': \(error.message)"))
        }
    }
}
