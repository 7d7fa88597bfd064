import Foundation
import RichPushCore

/// A push as the device reads it off its channel: the hub's envelope around the platform payload.
/// The payload's keys are read as the tutorial's app reads `userInfo` (iOS: top-level keys beside
/// `aps`) or as its Android twin reads `RemoteMessage.getData()` (the FCM message's `data`): a key
/// of the wrong type is absent (so a numeric `richId` is reported as "not an integer", not as
/// unreadable JSON).
struct ReceivedPush: Decodable {
    /// The hub's id: the push's collapse id and its installation.
    var id: String?
    var sentAt: Int?
    var payload: Payload

    struct Payload: Decodable {
        /// Keys beside `aps`, where the iOS app reads them.
        var topLevel: RichKeys
        /// An FCM message's data (every value a string), where the Android app reads them.
        var data: RichKeys?

        enum CodingKeys: String, CodingKey { case data }

        init(from decoder: any Decoder) throws {
            topLevel = try RichKeys(from: decoder)
            data = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(RichKeys.self, forKey: .data)
        }

        /// The rich keys as the app on `platform` reads them; nil when the push has no place for
        /// them on that platform (an FCM message without `data`).
        func keys(for platform: Platform) -> RichKeys? {
            platform == .fcm ? data : topLevel
        }
    }

    struct RichKeys: Decodable {
        var richId: String?
        var richType: String?
        var richMessage: String?

        enum CodingKeys: String, CodingKey { case richId, richType, richMessage }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            richId = try? container.decodeIfPresent(String.self, forKey: .richId)
            richType = try? container.decodeIfPresent(String.self, forKey: .richType)
            richMessage = try? container.decodeIfPresent(String.self, forKey: .richMessage)
        }
    }

    enum CodingKeys: String, CodingKey { case id, sentAt, payload }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try? container.decodeIfPresent(String.self, forKey: .id)
        sentAt = try? container.decodeIfPresent(Int.self, forKey: .sentAt)
        payload = try container.decode(Payload.self, forKey: .payload)
    }
}
