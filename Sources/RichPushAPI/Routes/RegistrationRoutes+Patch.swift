import Hummingbird
import RichPushCore
import RichPushQueue

extension RegistrationRoutes {
    /// `PATCH /api/register/{id}/templates/{name}`: sets one template of the caller's registration
    /// (added, or replacing the one of that name), compiled and bounded as `PUT` does; the rest of
    /// the registration is kept. A registration that is not the caller's is 404 before anything
    /// else is looked at, as for every id of another user's.
    @Sendable func patchTemplate(_ request: Request, context: APIRequestContext) async throws -> Response {
        let user = try context.caller(.listen)
        let id = try Self.registrationID(context)
        guard var installation = try await installations.installation(id: id), installation.owner == user.name else {
            throw APIError.notFound("no registration \(id) of yours")
        }
        guard let name = context.parameters.get("name"), InstallationTemplate.isValidName(name) else {
            throw APIError.badRequest("a template name is 1 to 64 ASCII letters, digits, '_', '-' or '.'", code: "invalid_template")
        }
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let entry = JSONValue.parse(Array(buffer: body)) else {
            throw APIError.badRequest(
                "the body must be a template {\"Body\", \"Headers\", \"Tags\", \"Missing\", \"Defaults\"}", code: "malformed_json")
        }
        let others = installation.templates.filter { $0.name != name }
        guard others.count < InstallationTemplate.maxPerInstallation else {
            throw APIError.badRequest(
                "at most \(InstallationTemplate.maxPerInstallation) templates per registration", code: "too_many_templates")
        }
        let template = try Self.template(name, entry, platform: installation.platform)
        guard others.reduce(template.body.utf8.count, { $0 + $1.body.utf8.count }) <= InstallationTemplate.maxBodyBytesPerInstallation
        else {
            throw APIError.badRequest(
                "the templates' bodies are over \(InstallationTemplate.maxBodyBytesPerInstallation) bytes together",
                code: "invalid_template")
        }
        installation.templates = (others + [template]).sorted { $0.name < $1.name }
        installation.updatedAt = JobQueue.nowMilliseconds()
        return try await save(installation, user: user)
    }
}
