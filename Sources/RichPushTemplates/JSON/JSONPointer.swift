/// The path to a value inside a JSON document, written as an RFC 6901 pointer in errors and
/// warnings: `/aps/alert`, `/loc-args/0`, with `~` written `~0` and `/` written `~1`.
struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    enum Component: Sendable, Hashable {
        case member(String)
        case index(Int)
    }

    private(set) var components: [Component] = []

    mutating func append(_ component: Component) { components.append(component) }

    mutating func removeLast() { components.removeLast() }

    /// The next element of the array this pointer ends in.
    mutating func advanceIndex() {
        guard case .index(let index)? = components.last else { return }
        components[components.count - 1] = .index(index + 1)
    }

    var description: String {
        var text = ""
        for component in components {
            text += "/"
            switch component {
            case .index(let index): text += String(index)
            case .member(let name):
                for character in name.unicodeScalars {
                    switch character {
                    case "~": text += "~0"
                    case "/": text += "~1"
                    default: text.unicodeScalars.append(character)
                    }
                }
            }
        }
        return text
    }
}
