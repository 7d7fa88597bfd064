/// A device registered for pushes: the seed's registration (`PUT /api/register/{id}`).
package struct Installation: Sendable, Hashable, Codable {
    /// Random, unguessable id (the seed's registration id).
    package var id: String
    package var platform: Platform
    /// The platform's push token (APNs device token, FCM registration token, ...).
    package var handle: String
    /// Tags, always including `username:<owner>`.
    package var tags: [String]
    /// The user who registered it; only they may change or delete it.
    package var owner: String
    /// Milliseconds since 1970.
    package var updatedAt: Int64
    /// The Apple service that knows `handle` (platform `apns` only; other platforms keep the
    /// default). A registration stored before environments existed is `production`.
    package var apnsEnvironment: APNSEnvironment
    /// The browser subscription's keys (platform `webpush` only): what its messages are encrypted to.
    package var webPushKeys: WebPushKeys?
    /// The templates it registered, by name (empty: it gets the default rich push).
    package var templates: [InstallationTemplate]
    /// Its BCP 47 locale, normalised (``LocaleTag``): the language of its localized properties.
    package var locale: String?

    package init(
        id: String, platform: Platform, handle: String, tags: [String], owner: String, updatedAt: Int64,
        apnsEnvironment: APNSEnvironment = .production, webPushKeys: WebPushKeys? = nil, templates: [InstallationTemplate] = [],
        locale: String? = nil
    ) {
        self.id = id
        self.platform = platform
        self.handle = handle
        self.tags = tags
        self.owner = owner
        self.updatedAt = updatedAt
        self.apnsEnvironment = apnsEnvironment
        self.webPushKeys = webPushKeys
        self.templates = templates
        self.locale = locale
    }

    private enum CodingKeys: String, CodingKey {
        case id, platform, handle, tags, owner, updatedAt, apnsEnvironment, webPushKeys, templates, locale
    }

    /// As synthesized, except that an encoding without `apnsEnvironment` (written before it
    /// existed) reads as `production`, and one without templates or locale has none.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), platform: try container.decode(Platform.self, forKey: .platform),
            handle: try container.decode(String.self, forKey: .handle), tags: try container.decode([String].self, forKey: .tags),
            owner: try container.decode(String.self, forKey: .owner), updatedAt: try container.decode(Int64.self, forKey: .updatedAt),
            apnsEnvironment: try container.decodeIfPresent(APNSEnvironment.self, forKey: .apnsEnvironment) ?? .production,
            webPushKeys: try container.decodeIfPresent(WebPushKeys.self, forKey: .webPushKeys),
            templates: try container.decodeIfPresent([InstallationTemplate].self, forKey: .templates) ?? [],
            locale: try container.decodeIfPresent(String.self, forKey: .locale))
    }

    /// The tag the backend adds to every registration of `user` (the seed's rule).
    package static func userTag(_ user: String) -> String { "username:\(user)" }
}
