import Foundation

/// The two steps of "all that match" (dead letters, scheduled sends, retries): a count stores
/// what it found as a single-use confirmation for that user and that action (`body`: what the
/// action needs to act on exactly that set), and the action takes it back once, checking that
/// the operator typed the number counted.
extension ConsoleRoutes {
    /// Stores `body` for `action` and answers its token; nil when nothing matched (`count` 0).
    func issueConfirmation(_ body: some Encodable, action: String, count: Int, session: ConsoleSession) async throws -> String? {
        guard count > 0 else { return nil }
        let encoded = String(decoding: try JSONEncoder().encode(body), as: UTF8.self)
        return try await backend.store.createConfirmation(
            ["user": session.user, "action": action, "body": encoded], lifetime: configuration.confirmationLifetime)
    }

    /// Takes the confirmation `token` of `action` (used whatever follows: once), as `Body`, when
    /// `confirmed` is the number it counted (`count(body)`); `noun` names what was counted.
    /// 400 `missing_confirmation`, 409 `confirmation_unknown` or `confirmation_mismatch`.
    func takeConfirmation<Body: Decodable>(
        _ token: String, confirmed: String?, action: String, as type: Body.Type, session: ConsoleSession,
        noun: String, verb: String, count: (Body) -> Int
    ) async throws -> (body: Body, count: Int) {
        guard token.utf8.count <= 64, let confirmed, let number = Int(confirmed) else {
            throw APIError.badRequest(
                "give the confirmation token and confirm, the number of \(noun) you mean to \(verb)", code: "missing_confirmation")
        }
        guard let stored = try await backend.store.takeConfirmation(token), stored["user"] == session.user, stored["action"] == action,
            let text = stored["body"], let body = try? JSONDecoder().decode(Body.self, from: Data(text.utf8))
        else {
            throw APIError(
                .conflict, code: "confirmation_unknown",
                message: "this confirmation is unknown, used, expired or for another action: count the matches again")
        }
        guard number == count(body) else {
            throw APIError(
                .conflict, code: "confirmation_mismatch",
                message: "\(count(body)) \(noun) matched when counted, not \(number): count again and confirm that number")
        }
        return (body, number)
    }
}
