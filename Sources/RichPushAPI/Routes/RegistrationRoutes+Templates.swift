import RichPushCore
import RichPushTemplates

extension RegistrationRoutes {
    /// The body's `Templates` (Azure Notification Hubs' shape, `{"name": {"Body", "Headers",
    /// "Tags"}}`, plus RichPush's `Missing` and `Defaults`), each body compiled here so a template
    /// that would deliver `$(…)` verbatim or break its JSON is refused now, not per push.
    static func templates(_ value: JSONValue?, platform: Platform) throws -> [InstallationTemplate] {
        guard let value, value != .null else { return [] }
        guard case .object(let members) = value else {
            throw APIError.badRequest("'Templates' must be an object of names to {\"Body\", \"Headers\", \"Tags\"}", code: "wrong_type")
        }
        guard members.count <= InstallationTemplate.maxPerInstallation else {
            throw APIError.badRequest(
                "at most \(InstallationTemplate.maxPerInstallation) templates per registration", code: "too_many_templates")
        }
        var templates: [InstallationTemplate] = []
        var bodyBytes = 0
        for (name, entry) in members.sorted(by: { $0.key < $1.key }) {
            guard InstallationTemplate.isValidName(name) else {
                throw APIError.badRequest(
                    "template name '\(name.prefix(64))' must be 1 to 64 ASCII letters, digits, '_', '-' or '.'", code: "invalid_template")
            }
            let template = try self.template(name, entry, platform: platform)
            bodyBytes += template.body.utf8.count
            guard bodyBytes <= InstallationTemplate.maxBodyBytesPerInstallation else {
                throw APIError.badRequest(
                    "the templates' bodies are over \(InstallationTemplate.maxBodyBytesPerInstallation) bytes together",
                    code: "invalid_template")
            }
            templates.append(template)
        }
        return templates
    }

    private static let templateFields: Set<String> = ["Body", "Headers", "Tags", "Missing", "Defaults", "Expiry"]

    /// One template of a registration of `platform` (its `Headers` are checked against what that
    /// platform takes).
    static func template(_ name: String, _ entry: JSONValue, platform: Platform) throws -> InstallationTemplate {
        guard case .object(let fields) = entry else {
            throw APIError.badRequest(
                "template '\(name)' must be an object {\"Body\", \"Headers\", \"Tags\", \"Missing\", \"Defaults\"}", code: "wrong_type")
        }
        if let unknown = fields.keys.sorted().first(where: { !templateFields.contains($0) }) {
            throw APIError.badRequest(
                "template '\(name)': unknown field '\(unknown)'; known: \(templateFields.sorted().joined(separator: ", "))",
                code: "unknown_field")
        }
        guard let body = fields["Body"]?.string else {
            throw APIError.badRequest("template '\(name)': 'Body' (a string) is required", code: "missing_field")
        }
        do {
            _ = try Template(body)
        } catch {
            throw APIError.badRequest(
                "template '\(name)': \(error.code): \(error.message) (at pointer '\(error.pointer)', line \(error.location.line), "
                    + "column \(error.location.column))", code: "invalid_template")
        }
        let missing: InstallationTemplate.MissingPolicy
        switch fields["Missing"] {
        case nil, .null?: missing = .fallback
        case let value?:
            // `empty` is Notification Hubs' rule, for templates registered through its interface.
            guard let policy = value.string.flatMap(InstallationTemplate.MissingPolicy.init(rawValue:)), policy != .empty else {
                throw APIError.badRequest("template '\(name)': 'Missing' is 'fallback' or 'fail'", code: "wrong_type")
            }
            missing = policy
        }
        let headers = try strings(fields["Headers"], "template '\(name)': 'Headers'")
        try checkHeaders(headers, template: name, platform: platform, alert: JSONValue.parse(Array(body.utf8))?["aps"]?["alert"] != nil)
        let defaults = try strings(fields["Defaults"], "template '\(name)': 'Defaults'")
        if let bad = defaults.keys.sorted().first(where: { !InstallationTemplate.isValidName($0) }) {
            throw APIError.badRequest("template '\(name)': default '\(bad.prefix(64))' is not a property name", code: "invalid_template")
        }
        do {
            _ = try TemplateProperties(defaults)
        } catch {
            throw APIError.badRequest("template '\(name)': 'Defaults': \(error.message)", code: "invalid_template")
        }
        var tags: [String] = []
        if let value = fields["Tags"], value != .null {
            let problem = "template '\(name)': 'Tags' is an array of up to \(InstallationTemplate.maxEntries) tags"
            guard case .array(let items) = value, items.count <= InstallationTemplate.maxEntries else {
                throw APIError.badRequest(problem, code: "wrong_type")
            }
            for item in items {
                guard let tag = item.string else { throw APIError.badRequest(problem, code: "wrong_type") }
                do { try TagExpression.validate(tag: tag) } catch {
                    throw APIError.badRequest("template '\(name)': \(error.message)", code: "invalid_tag")
                }
                tags.append(tag)
            }
        }
        let expiry = try self.expiry(fields["Expiry"], template: name, platform: platform)
        return InstallationTemplate(
            name: name, body: body, headers: headers, tags: tags, missing: missing, defaults: defaults, expiry: expiry)
    }

    /// The template's `Expiry` (``TemplateExpiry``), for an apns or webpush template: a string of up
    /// to ``InstallationTemplate/maxValueBytes`` bytes compiled as a header's value is; a literal is
    /// checked now. 400 `invalid_expiry` otherwise.
    static func expiry(_ value: JSONValue?, template name: String, platform: Platform) throws -> String? {
        guard let value, value != .null else { return nil }
        guard TemplateHeaders.format(of: platform) != .fcm else {
            throw APIError.badRequest(
                "template '\(name)': 'Expiry' is for apns and webpush templates; an fcm template sets android.ttl in its body",
                code: "invalid_expiry")
        }
        guard let text = value.string, text.utf8.count <= InstallationTemplate.maxValueBytes else {
            throw APIError.badRequest(
                "template '\(name)': 'Expiry' is a string of up to \(InstallationTemplate.maxValueBytes) bytes", code: "invalid_expiry")
        }
        let compiled: Template
        do {
            compiled = try Template(TemplateHeaders.body(of: text))
        } catch {
            throw APIError.badRequest("template '\(name)': 'Expiry': \(error.code): \(error.message)", code: "invalid_expiry")
        }
        var push = RenderedPush(payload: [], pushType: "alert", priority: 10, expiration: 0, collapseID: "x")
        if compiled.expressionCount == 0, let problem = TemplateExpiry.apply(text, to: &push) {
            throw APIError.badRequest("template '\(name)': \(problem)", code: "invalid_expiry")
        }
        return text
    }

    /// The template's `Headers` (`alert`: the body has `aps.alert`): each a name `platform` takes (``TemplateHeaders``), its value
    /// compiled as a body's string value is, and a value without expressions checked now; 400
    /// `invalid_header` naming the header otherwise.
    static func checkHeaders(_ headers: [String: String], template name: String, platform: Platform, alert: Bool) throws {
        let format = TemplateHeaders.format(of: platform)
        // As the worker starts it: an alert body is sent as an alert, another as a background push.
        var push = RenderedPush(
            payload: [], pushType: alert ? "alert" : "background", priority: alert ? 10 : 5, expiration: 0, collapseID: "x")
        var literals = 0
        if let twice = TemplateHeaders.duplicate(in: headers) {
            throw APIError.badRequest(
                "template '\(name)': header '\(twice)' is given twice (header names are not case-sensitive)", code: "invalid_header")
        }
        for (header, value) in TemplateHeaders.ordered(headers) {
            if let problem = TemplateHeaders.nameProblem(header, format: format) {
                throw APIError.badRequest("template '\(name)': \(problem)", code: "invalid_header")
            }
            let compiled: Template
            do {
                compiled = try Template(TemplateHeaders.body(of: value))
            } catch {
                throw APIError.badRequest("template '\(name)': header '\(header)': \(error.code): \(error.message)", code: "invalid_header")
            }
            guard compiled.expressionCount == 0 else { continue }
            literals += 1
            if let problem = TemplateHeaders.apply(header, value, to: &push, now: 0) {
                throw APIError.badRequest("template '\(name)': \(problem)", code: "invalid_header")
            }
        }
        // Both set as literals: APNs' rule on the pair is checked now too.
        if literals == headers.count, let problem = TemplateHeaders.combinationProblem(push, format: format) {
            throw APIError.badRequest("template '\(name)': \(problem)", code: "invalid_header")
        }
    }

    /// An object of up to ``InstallationTemplate/maxEntries`` short strings.
    private static func strings(_ value: JSONValue?, _ field: String) throws -> [String: String] {
        guard let value, value != .null else { return [:] }
        guard case .object(let members) = value, members.count <= InstallationTemplate.maxEntries else {
            throw APIError.badRequest(
                "\(field) is an object of up to \(InstallationTemplate.maxEntries) names to strings", code: "wrong_type")
        }
        var strings: [String: String] = [:]
        for (key, item) in members {
            guard let text = item.string, (1...InstallationTemplate.maxNameLength).contains(key.utf8.count),
                text.utf8.count <= InstallationTemplate.maxValueBytes
            else {
                throw APIError.badRequest(
                    "\(field) is an object of names (up to \(InstallationTemplate.maxNameLength) bytes) to strings of up to "
                        + "\(InstallationTemplate.maxValueBytes) bytes", code: "wrong_type")
            }
            strings[key] = text
        }
        return strings
    }

    /// The body's `Locale`: a BCP 47 tag (`fr-CA`; `fr_CA` is read as the same), normalised.
    static func locale(_ value: JSONValue?) throws -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.string, let tag = LocaleTag(text) else {
            throw APIError.badRequest(
                "'Locale' must be a BCP 47 language tag such as en, fr-CA (fr_CA is accepted)", code: "invalid_locale")
        }
        return tag.identifier
    }
}
