import Foundation
import RichPushCore
import RichPushTemplates

/// The template preview's page: the form (kept as sent) and the rendered output, its size
/// against each platform's limit, and the render's warnings.
enum ConsoleTemplatePage {
    static func html(form: ConsoleForm, result: (locale: String?, output: RenderedTemplate)?, problem: String?) -> HTML {
        let missing = form["missing"] ?? "fallback"
        let options: [HTML] = ["fallback", "fail", "empty"].map {
            "<option value=\"\($0)\"\(missing == $0 ? " selected" as HTML : "")>\($0)</option>"
        }
        let error: HTML = problem.map { "<p class=\"error\" role=\"alert\" id=\"preview-problem\">\($0)</p>" } ?? ""
        let template = form.fields.first { $0.name == "template" }?.value ?? ""
        let properties = form.fields.first { $0.name == "properties" }?.value ?? ""
        return """
            <h1>Template preview</h1>
            <p>A template rendered with a send's properties for a device's locale, exactly as <code>POST /api/templates/render</code> \
            renders it (its own code). Nothing is sent or stored. Give a template body, or an installation's id and its template's name.</p>
            \(error)
            <form method="post" action="/console/templates" class="preview" id="preview">
            <label for="app">App</label><input id="app" name="app" value="\(form["app"] ?? "default")" maxlength="64" required>
            <label for="template">Template body (up to \(ConsoleTemplateRoutes.maxTemplateBytes) bytes)</label>
            <textarea id="template" name="template" rows="6" maxlength="\(ConsoleTemplateRoutes.maxTemplateBytes)" spellcheck="false">\(template)</textarea>
            <label for="installation">or an installation's id</label><input id="installation" name="installation" value="\(form["installation"] ?? "")" maxlength="128">
            <label for="name">and its template's name</label><input id="name" name="name" value="\(form["name"] ?? "")" maxlength="64">
            <label for="properties">Properties (JSON: {"title": "Hi", "body": {"en": "Hello", "fr": "Bonjour"}})</label>
            <textarea id="properties" name="properties" rows="5" maxlength="\(ConsoleTemplateRoutes.maxPropertiesBytes)" spellcheck="false">\(properties)</textarea>
            <label for="locale">Device locale</label><input id="locale" name="locale" value="\(form["locale"] ?? "")" maxlength="64" placeholder="fr_CA">
            <label for="defaultLocale">App's default locale</label><input id="defaultLocale" name="defaultLocale" value="\(form["defaultLocale"] ?? "")" maxlength="64" placeholder="en">
            <label for="missing">A missing property (a body's template; an installation's uses its own)</label><select id="missing" name="missing">\(options)</select>
            <button type="submit">Render</button></form>
            \(result.map(output) ?? "")
            """
    }

    static func output(_ result: (locale: String?, output: RenderedTemplate)) -> HTML {
        let bytes = result.output.bytes.count
        let limits: [(String, Int)] = [
            ("APNs", PushRenderer.maxPayloadBytes), ("FCM", PushRenderer.maxFCMDataBytes),
            ("Web Push (plaintext)", PushRenderer.maxWebPushPlaintextBytes),
        ]
        let rows: [HTML] = limits.map { name, limit in
            "<tr><th scope=\"row\">\(name)</th><td>\(limit)</td><td>\(bytes <= limit ? "fits" : "too large: the device would fail with payload_too_large")</td></tr>"
        }
        let warnings: [HTML] = result.output.warnings.map {
            "<li><code>\($0.code.rawValue)</code> \($0.message) (at <code>\($0.pointer)</code>)</li>"
        }
        return """
            <section aria-labelledby="rendered-title" id="rendered"><h2 id="rendered-title">Rendered</h2>
            <p>Locale chosen: <strong>\(result.locale ?? "none (the properties' plain values)")</strong>; \(bytes) bytes.</p>
            <pre class="json" id="output">\(String(decoding: result.output.bytes, as: UTF8.self))</pre>
            <div class="scroll"><table id="limits"><thead><tr><th scope="col">Platform</th><th scope="col">Limit (bytes)</th><th scope="col">This output</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            \(warnings.isEmpty ? "<p>No warnings.</p>" as HTML : "<h3>Warnings</h3><ul id=\"warnings\">\(warnings)</ul>")
            </section>
            """
    }
}
