/// Writes the Lua that binds a ``LuaScript`` declaration's names to `KEYS` and `ARGV`: the only
/// place positions are counted. Consecutive fixed slots become one `local a, b = ARGV[1], ARGV[2]`;
/// after a list or a section the reads go on from the cursors `_k` and `_a`.
struct LuaPrelude {
    private(set) var lines: [String] = []
    /// Whether `_k` and `_a` are used (then declared first, from 1).
    private(set) var usesCursors = false
    /// The next key's and argument's position: a literal while it is known, else the cursor plus
    /// an offset.
    private var keyLiteral: Int? = 1, argumentLiteral: Int? = 1
    private var keyOffset = 0, argumentOffset = 0

    /// The Lua text, cursors declared first when used.
    var text: String {
        ((usesCursors ? ["local _k, _a = 1, 1"] : []) + lines).map { $0 + "\n" }.joined()
    }

    /// Binds `shapes` in order; `declare`: as new locals (else they were declared before).
    mutating func bind(_ shapes: [LuaShape], declare: Bool = true, indent: String = "") {
        var names: [String] = [], values: [String] = []
        func flush() {
            guard !names.isEmpty else { return }
            lines.append(indent + (declare ? "local " : "") + names.joined(separator: ", ") + " = " + values.joined(separator: ", "))
            names = []
            values = []
        }
        for shape in shapes {
            switch shape {
            case .key(let name):
                names.append(name)
                values.append("KEYS[\(position(keyLiteral, "_k", keyOffset))]")
                keyOffset += 1
            case .argument(let name, let number):
                names.append(name)
                let read = "ARGV[\(position(argumentLiteral, "_a", argumentOffset))]"
                values.append(number ? "tonumber(\(read))" : read)
                argumentOffset += 1
            case .list(let name, let optional):
                names += [name + "Count", name + "From"]
                values += [
                    "tonumber(ARGV[\(position(argumentLiteral, "_a", argumentOffset))])",
                    position(argumentLiteral, "_a", argumentOffset + 1),
                ]
                flush()
                let count = optional ? "math.max(\(name)Count, 0)" : "\(name)Count"
                lines.append(indent + (declare ? "local " : "") + "\(name)To = \(name)From + \(count) - 1")
                lines.append(indent + "_a = \(name)To + 1")
                usesCursors = true
                argumentLiteral = nil
                argumentOffset = 0
            case .section(let name, let parts):
                names.append(name)
                values.append("ARGV[\(position(argumentLiteral, "_a", argumentOffset))] == '1'")
                argumentOffset += 1
                flush()
                let inner = parts.flatMap(\.names)
                if declare, !inner.isEmpty { lines.append(indent + "local " + inner.joined(separator: ", ")) }
                advance(indent: indent)
                lines.append(indent + "if \(name) then")
                bind(parts, declare: false, indent: indent + "  ")
                advance(indent: indent + "  ")
                lines.append(indent + "end")
            }
        }
        flush()
    }

    /// Moves the cursors to the next unread key and argument (from here on, positions are the
    /// cursors themselves).
    mutating func advance(indent: String = "") {
        var targets: [String] = [], values: [String] = []
        if keyLiteral != nil || keyOffset != 0 {
            targets.append("_k")
            values.append(position(keyLiteral, "_k", keyOffset))
        }
        if argumentLiteral != nil || argumentOffset != 0 {
            targets.append("_a")
            values.append(position(argumentLiteral, "_a", argumentOffset))
        }
        if !targets.isEmpty { lines.append(indent + targets.joined(separator: ", ") + " = " + values.joined(separator: ", ")) }
        usesCursors = true
        keyLiteral = nil
        argumentLiteral = nil
        keyOffset = 0
        argumentOffset = 0
    }

    /// Adds hand-written or loop text as is.
    mutating func append(_ text: String) {
        lines.append(
            contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(
                text.hasSuffix("\n") ? 1 : 0))
    }

    private func position(_ literal: Int?, _ cursor: String, _ offset: Int) -> String {
        if let literal { return "\(literal + offset)" }
        return offset == 0 ? cursor : "\(cursor) + \(offset)"
    }
}
