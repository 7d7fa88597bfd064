import HTTPTypes
import Hummingbird

extension NotificationRoutes {
    /// Azure Notification Hubs' header for a template send, whose body is the properties alone.
    static let formatHeader = HTTPField.Name("ServiceBusNotification-Format")!
    /// NH's header naming a template send's target: a tag or a tag expression.
    static let tagsHeader = HTTPField.Name("ServiceBusNotification-Tags")!

    /// Whether the request is an NH template send (`ServiceBusNotification-Format: template`);
    /// another format is refused (RichPush renders the platforms' payloads itself).
    static func isTemplateFormat(_ request: Request) throws -> Bool {
        guard let format = request.headers[formatHeader] else { return false }
        guard format.lowercased() == "template" else {
            throw APIError.badRequest(
                "ServiceBusNotification-Format '\(format.prefix(32))' is not supported; send 'template' with the properties as the body, "
                    + "or leave the header out", code: "unsupported_format")
        }
        return true
    }
}
