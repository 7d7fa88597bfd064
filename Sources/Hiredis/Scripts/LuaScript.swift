/// A Lua script declared with the names of its keys and arguments: the Lua that binds them to
/// `KEYS` and `ARGV` is generated from the declaration, and the Swift call fills them from a
/// typed value by the same declaration, so neither side counts positions by hand.
///
/// A batched script (one call for many items, e.g. a partition's notifications) declares the
/// slots of the call and those of each item; the generated loop binds an item's names, steps
/// past it, and runs `eachItem` inside `repeat … until true`, so `break` ends that item early.
/// The generated text reads `KEYS`/`ARGV` where a hand-written one did (no table per item, no
/// decoding), and ``script`` is an ordinary ``RedisScript``: loaded once, run by SHA.
package struct LuaScript<Call, Item>: Sendable {
    /// The whole script as Redis runs it.
    package let script: RedisScript
    /// The text written by hand: shared fragments (functions, before the prelude: they see no
    /// declared name) and the body (after it). Both use names only.
    package let fragments: String
    package let body: String
    /// What the prelude binds, for the call and for each item.
    package let shapes: [LuaShape]
    package let itemShapes: [LuaShape]
    /// Whether the script loops over items.
    package var isBatched: Bool { items != nil }
    private let slots: [LuaSlot<Call>]
    private let items: (@Sendable (Call) -> [Item])?
    private let itemSlots: [LuaSlot<Item>]

    /// A script run once per call: `body` runs after the prelude that binds `slots`.
    package init(_ slots: [LuaSlot<Call>], constants: [LuaConstant] = [], using fragments: [String] = [], body: String)
    where Item == Never {
        self.init(
            slots: slots, items: nil, itemSlots: [], constants: constants, fragments: fragments, before: body, eachItem: nil, after: "")
    }

    /// A script that loops over the call's items: `before` runs once after the call's prelude,
    /// `eachItem` once per item after the item's prelude, `after` at the end.
    package init(
        _ slots: [LuaSlot<Call>], items: @escaping @Sendable (Call) -> [Item], each itemSlots: [LuaSlot<Item>],
        constants: [LuaConstant] = [],
        using fragments: [String] = [], before: String = "", eachItem: String, after: String
    ) {
        self.init(
            slots: slots, items: items, itemSlots: itemSlots, constants: constants, fragments: fragments, before: before,
            eachItem: eachItem, after: after)
    }

    private init(
        slots: [LuaSlot<Call>], items: (@Sendable (Call) -> [Item])?, itemSlots: [LuaSlot<Item>], constants: [LuaConstant],
        fragments: [String],
        before: String, eachItem: String?, after: String
    ) {
        self.slots = slots
        self.items = items
        self.itemSlots = itemSlots
        shapes = slots.map(\.shape)
        itemShapes = itemSlots.map(\.shape)
        self.fragments = fragments.joined()
        body = before + (eachItem ?? "") + after
        let written = self.fragments + body
        var prelude = LuaPrelude()
        prelude.bind(shapes)
        prelude.append(before)
        if let eachItem {
            prelude.advance()
            // An item with keys ends where its keys do; else where its arguments do.
            prelude.append(
                itemShapes.contains { if case .key = $0 { true } else { false } } ? "while _k <= #KEYS do" : "while _a <= #ARGV do")
            prelude.advance()
            prelude.bind(itemShapes, indent: "  ")
            prelude.advance(indent: "  ")
            prelude.append("  repeat\n" + eachItem + "  until true\nend\n")
        }
        prelude.append(after)
        let used = constants.filter { written.containsWord($0.name) }.map { "local \($0.name) = \($0.lua)\n" }.joined()
        script = RedisScript(used + fragments.joined() + prelude.text)
    }

    /// The keys and arguments of `call`, in the declaration's order.
    package func encode(_ call: Call) -> (keys: [any RedisArgument], arguments: [any RedisArgument]) {
        var keys: [any RedisArgument] = [], arguments: [any RedisArgument] = []
        for slot in slots { slot.fill(call, &keys, &arguments) }
        for item in items?(call) ?? [] {
            for slot in itemSlots { slot.fill(item, &keys, &arguments) }
        }
        return (keys, arguments)
    }

    /// The `EVALSHA` command for `call`.
    package func command(_ call: Call) -> RedisCommand {
        let (keys, arguments) = encode(call)
        return script.command(keys: keys, arguments: arguments)
    }
}

/// What a check can read of any ``LuaScript``, whatever its call types.
package protocol LuaDeclaration: Sendable {
    var script: RedisScript { get }
    var fragments: String { get }
    var body: String { get }
    var shapes: [LuaShape] { get }
    var itemShapes: [LuaShape] { get }
    var isBatched: Bool { get }
}

extension LuaScript: LuaDeclaration {}

/// A value spelled once in Swift and put into a script's text as a Lua local (only into the
/// scripts whose hand-written text names it).
package struct LuaConstant: Sendable, Hashable {
    package let name: String
    /// The value as a Lua literal.
    package let lua: String

    /// A string constant.
    package static func string(_ name: String, _ value: String) -> LuaConstant {
        precondition(!value.contains("'") && !value.contains("\\"), "a Lua constant is quoted as is")
        return LuaConstant(name: name, lua: "'\(value)'")
    }

    /// A number constant (e.g. a byte, for `string.byte(value) == NAME`).
    package static func number(_ name: String, _ value: Int) -> LuaConstant {
        LuaConstant(name: name, lua: "\(value)")
    }
}

extension RedisClient {
    /// Runs the script for `call`; an error reply (from the script or Redis) is thrown.
    @discardableResult
    package func run<Call, Item>(_ script: LuaScript<Call, Item>, _ call: Call) async throws -> RedisValue {
        try await run(script, calls: [call])[0].throwingError()
    }

    /// Runs the script once per call in one pipeline; replies in order, error replies as values.
    package func run<Call, Item>(_ script: LuaScript<Call, Item>, calls: [Call]) async throws -> [RedisValue] {
        try await pipeline(calls.map(script.command), loading: [script.script])
    }
}

extension String {
    /// Whether `word` occurs here as a whole Lua identifier.
    func containsWord(_ word: String) -> Bool {
        var rest = self[...]
        while let range = rest.range(of: word) {
            let before = range.lowerBound == startIndex ? nil : self[index(before: range.lowerBound)]
            let after = range.upperBound == endIndex ? nil : self[range.upperBound]
            if !(before?.isLuaIdentifier ?? false), !(after?.isLuaIdentifier ?? false) { return true }
            rest = self[range.upperBound...]
        }
        return false
    }
}

extension Character {
    var isLuaIdentifier: Bool { isLetter || isNumber || self == "_" }
}
