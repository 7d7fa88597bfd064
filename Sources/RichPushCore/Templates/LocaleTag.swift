/// A BCP 47 language tag as RichPush keeps it: `fr-CA`, `zh-Hant-TW`, `en`. Accepts `fr_CA`
/// (the POSIX spelling devices report) and any case; normalised to lower-case language,
/// title-case script and upper-case region, as BCP 47 recommends.
package struct LocaleTag: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let identifier: String

    /// nil when `text` is not a well-formed tag of up to 35 characters (an ISO 639 language of 2
    /// or 3 letters, then subtags of 1 to 8 letters or digits); `english` is not a locale.
    package init?(_ text: String) {
        guard (2...35).contains(text.utf8.count) else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let language = parts.first, (2...3).contains(language.count), language.unicodeScalars.allSatisfy(Self.isLetter) else {
            return nil
        }
        var normalised = [language.lowercased()]
        for part in parts.dropFirst() {
            guard (1...8).contains(part.count), part.unicodeScalars.allSatisfy({ Self.isLetter($0) || ("0"..."9").contains($0) }) else {
                return nil
            }
            if part.count == 2 && part.unicodeScalars.allSatisfy(Self.isLetter) {
                normalised.append(part.uppercased())  // region
            } else if part.count == 4 && part.unicodeScalars.allSatisfy(Self.isLetter) {
                normalised.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())  // script
            } else {
                normalised.append(part.lowercased())
            }
        }
        identifier = normalised.joined(separator: "-")
    }

    /// The language subtag alone: `fr` of `fr-CA`.
    package var language: String {
        String(identifier.prefix { $0 != "-" })
    }

    package var description: String { identifier }

    package static func < (lhs: LocaleTag, rhs: LocaleTag) -> Bool { lhs.identifier < rhs.identifier }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }
}
