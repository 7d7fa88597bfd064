/// An installation's (or registration's) id as NH's entity segments are: 1 to 64 letters,
/// digits, `.`, `-` or `_`; one rule for the URL's id and `$InstallationId:{…}`.
package enum NHInstallationID {
    package static let rule = "an installation id is 1 to 64 letters, digits, '.', '-' or '_'"

    package static func isValid(_ id: some StringProtocol) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default:
                    false
                }
            }
    }
}
