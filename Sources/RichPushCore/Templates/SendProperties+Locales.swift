extension SendProperties {
    /// The text of every property for a device of `locale`: each localized property by the chain
    /// exact locale → the device's language (`fr` for `fr-CA`, else the first `fr-…` given) → the
    /// app's default locale (``defaultLocale``, by the same two steps) → the first locale given;
    /// `chosen` is the locale the first localized property took (nil: none is localized).
    package func values(for locale: String?) -> (values: [String: String], chosen: String?) {
        let tag = locale.flatMap(LocaleTag.init)
        let fallback = defaultLocale.flatMap(LocaleTag.init)
        var values = [String: String](minimumCapacity: properties.count)
        var chosen: String?
        for property in properties {
            switch property.value {
            case .text(let text):
                values[property.name] = text
            case .localized(let locales):
                let pick = Self.pick(locales, for: tag, default: fallback)
                values[property.name] = pick.text
                if chosen == nil { chosen = pick.locale }
            }
        }
        return (values, chosen)
    }

    /// One property's locale for `tag` by the chain, then for the app's default; `locales` is
    /// never empty.
    static func pick(_ locales: [Localized], for tag: LocaleTag?, default fallback: LocaleTag? = nil) -> Localized {
        for tag in [tag, fallback].compactMap({ $0 }) {
            if let exact = locales.first(where: { $0.locale == tag.identifier }) { return exact }
            let language = tag.language
            if let bare = locales.first(where: { $0.locale == language }) { return bare }
            if let sibling = locales.first(where: { $0.locale.hasPrefix(language + "-") }) { return sibling }
        }
        return locales[0]
    }
}
