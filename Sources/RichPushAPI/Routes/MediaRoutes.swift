import Foundation
import Hummingbird
import RichPushCore
import RichPushStorage

/// `GET /media/{app}/{id}?installation=&expires=&signature=`: a notification's payload for the
/// notification service extension of one device, by the signed URL its alert carries
/// (``MediaURLSigner``), without the user's credentials. The signature is checked first, without
/// a lookup (403 `bad_signature`), then its expiry (403 `expired_signature`); then the
/// notification must have been addressed to that installation (404 otherwise) and the fetch is
/// counted for it, as the app's own fetch is.
struct MediaRoutes {
    let apps: AppDirectory
    let signer: MediaURLSigner

    func add(to router: Router<APIRequestContext>) {
        router.get("media/:app/:id") { try await fetch($0, context: $1) }
    }

    @Sendable func fetch(_ request: Request, context: APIRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let appText = context.parameters.get("app"), let app = AppID(validating: appText) else {
            throw APIError.badRequest("the media URL names no valid app", code: "bad_media_url")
        }
        let id = try NotificationRoutes.notificationID(context)
        guard let installation = query["installation"].map(String.init), (1...128).contains(installation.utf8.count),
            let expiresText = query["expires"], let expires = Int64(expiresText),
            let signature = query["signature"].map(String.init)
        else {
            throw APIError.badRequest(
                "a media URL carries installation, expires and signature, as the alert gave it", code: "bad_media_url")
        }
        guard try await signer.isValid(signature: signature, app: app, id: id, installation: installation, expires: expires) else {
            throw APIError(.forbidden, code: "bad_signature", message: "the media URL's signature does not match")
        }
        guard expires > Int64(Date().timeIntervalSince1970) else {
            throw APIError(.forbidden, code: "expired_signature", message: "the media URL expired at \(expires) (seconds since 1970)")
        }
        guard try await apps.contains(app) else { throw APIError.notFound("no notification \(id)") }
        let notifications = apps.stores(for: app).notifications
        let addressed = try await notifications.recordFetch(
            id: id, installation: installation, reader: "media", if: .installation(installation))
        guard addressed, let found = try await notifications.notification(id: id) else { throw APIError.notFound("no notification \(id)") }
        return try await NotificationRoutes.payloadResponse(of: found, from: notifications)
    }
}
