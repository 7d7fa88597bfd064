import Hiredis
import RichPushCore

/// The names the scripts share with Swift, put into each script that uses them as Lua locals
/// (``LuaConstant``): ledger marks (`LEDGER_RECORDED`, `LEDGER_RECORDED_BYTE`, …), states
/// (`STATE_QUEUED`, …, `STATE_ORDER` and `STATE_IMPLIED`), counters (`COUNTER_SENT`, …), status fields
/// (`FIELD_STATE`, …), record fields (`RECORD_CREATOR`, …) and webhook events (`EVENT_SENT`, …). Each is spelled once, in the Swift
/// enum it comes from.
extension NotificationLua {
    static let constants: [LuaConstant] =
        LedgerMark.allCases.flatMap { mark in
            [
                LuaConstant.string("LEDGER_\(constantName("\(mark)"))", mark.rawValue),
                .number("LEDGER_\(constantName("\(mark)"))_BYTE", Int(mark.byte)),
            ]
        } + DeliveryState.allCases.map { .string("STATE_\(constantName($0.rawValue))", $0.rawValue) }
        + [.string("STATE_ORDER", stateOrder), .string("STATE_IMPLIED", impliedStates)]
        + DeliveryCounter.allCases.map { .string("COUNTER_\(constantName($0.rawValue))", $0.rawValue) }
        + StatusField.allCases.map { .string("FIELD_\(constantName($0.rawValue))", $0.rawValue) }
        + RecordField.allCases.map { .string("RECORD_\(constantName($0.rawValue))", $0.rawValue) }
        + WebhookEventType.allCases.map { .string("EVENT_\(constantName($0.rawValue))", $0.rawValue) }

    /// `invalidToken` → `INVALID_TOKEN`.
    static func constantName(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase, !out.isEmpty { out += "_" }
            out += character.uppercased()
        }
        return out
    }

}
