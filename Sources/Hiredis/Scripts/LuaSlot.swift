/// One named key or argument of a ``LuaScript`` call: its name in the script's Lua, and how a
/// call's Swift value fills it. The order of a declaration's slots is the order of `KEYS` and
/// `ARGV`, for the generated Lua prelude and for the Swift encoder alike, so neither side counts
/// positions by hand.
package struct LuaSlot<Value>: Sendable {
    /// What the Lua prelude binds for this slot.
    let shape: LuaShape
    /// Appends this slot's keys and arguments for `value`.
    let fill: @Sendable (Value, inout [any RedisArgument], inout [any RedisArgument]) -> Void

    /// A key, bound as `local <name> = KEYS[…]`.
    package static func key(_ name: String, _ value: @escaping @Sendable (Value) -> any RedisArgument) -> LuaSlot {
        LuaSlot(shape: .key(name)) { call, keys, _ in keys.append(value(call)) }
    }

    /// An argument, bound as `local <name> = ARGV[…]` (a string).
    package static func argument(_ name: String, _ value: @escaping @Sendable (Value) -> any RedisArgument) -> LuaSlot {
        LuaSlot(shape: .argument(name, number: false)) { call, _, arguments in arguments.append(value(call)) }
    }

    /// A numeric argument, bound as `local <name> = tonumber(ARGV[…])`.
    package static func number(_ name: String, _ value: @escaping @Sendable (Value) -> any RedisArgument) -> LuaSlot {
        LuaSlot(shape: .argument(name, number: true)) { call, _, arguments in arguments.append(value(call)) }
    }

    /// A run of arguments sent as its length and then its elements; the script reads it as
    /// `<name>Count`, and `ARGV[i]` for `i` in `<name>From…<name>To` (or `unpack(ARGV, <name>From, <name>To)`).
    /// A nil list (`optional`) is sent as length -1 and read as none (`<name>To < <name>From`).
    package static func list(
        _ name: String, optional: Bool = false, _ value: @escaping @Sendable (Value) -> [any RedisArgument]?
    ) -> LuaSlot {
        LuaSlot(shape: .list(name, optional: optional)) { call, _, arguments in
            guard let elements = value(call) else { return arguments.append(-1) }
            arguments.append(elements.count)
            arguments.append(contentsOf: elements)
        }
    }

    /// Keys and arguments present only when `value` gives a part: a flag argument (1 or 0), bound
    /// as the boolean `<name>`, then the part's slots, bound when it is true (nil otherwise).
    package static func section<Part>(_ name: String, _ value: @escaping @Sendable (Value) -> Part?, _ slots: [LuaSlot<Part>]) -> LuaSlot {
        LuaSlot(shape: .section(name, slots.map(\.shape))) { call, keys, arguments in
            guard let part = value(call) else { return arguments.append(0) }
            arguments.append(1)
            for slot in slots { slot.fill(part, &keys, &arguments) }
        }
    }
}

/// The Lua side of a ``LuaSlot``: what name it binds, and how it steps through `KEYS` and `ARGV`.
package indirect enum LuaShape: Sendable, Hashable {
    case key(String)
    case argument(String, number: Bool)
    case list(String, optional: Bool)
    case section(String, [LuaShape])

    /// The Lua locals this slot binds.
    package var names: [String] {
        switch self {
        case .key(let name), .argument(let name, _): [name]
        case .list(let name, _): [name + "Count", name + "From", name + "To"]
        case .section(let name, let shapes): [name] + shapes.flatMap(\.names)
        }
    }
}
