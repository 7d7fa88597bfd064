import Foundation
import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushNH
import Testing

@testable import RichPushApps

/// An app's Notification Hubs rules on a real Redis: sealed as credentials are, shown only as
/// names and rights, opened again whole, rotated one key at a time, re-sealed by a rekey.
@Suite("NH rules in the app store")
struct NHRulesStoreTests {
    @Test func sealedAtRestShownAsNamesAndRightsRotatedAndRekeyed() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let prefix = String(uniqueKeyPrefix("apps").dropLast())
            let old = KeyEncryptionKey.generate()
            let store = RedisAppStore(redis: connection, keys: AppKeys(prefix: prefix), ring: KeyRing(current: old))
            let shop = try AppID("shop")
            _ = try await store.create(id: shop, name: "Shop", credentials: AppCredentials())
            #expect(try await store.nhRules(id: shop)?.rules == [], "none until given")
            let rules = NHAccessRule.defaults()
            let updated = try await store.update(id: shop, change: AppChange(nhRules: .some(rules)))
            #expect(
                updated.nhRules == [
                    "DefaultFullSharedAccessSignature": ["Listen", "Manage", "Send"], "DefaultListenSharedAccessSignature": ["Listen"],
                ])
            // No key in the clear, in Redis or in the summary.
            let stored =
                try await connection.send("HGETALL", "\(prefix):{apps}:app:shop").array?.compactMap(\.string).joined(separator: "\n") ?? ""
            for rule in rules {
                #expect(!stored.contains(rule.primaryKey) && !stored.contains(rule.secondaryKey))
                #expect(!"\(updated)".contains(rule.primaryKey))
            }
            #expect(try await store.nhRules(id: shop)?.rules == rules)
            #expect(try await store.nhRules(id: try AppID("nope")) == nil)

            // A rotation replaces one key; the other still signs.
            let rotated = rules[1].rotating(.secondary)
            #expect(rotated.primaryKey == rules[1].primaryKey && rotated.secondaryKey != rules[1].secondaryKey)
            _ = try await store.update(id: shop, change: AppChange(nhRules: .some([rules[0], rotated])))
            #expect(try await store.nhRules(id: shop)?.rules[1] == rotated)

            // A new key-encryption key: the rules are counted, re-sealed, and open with it alone.
            let new = KeyEncryptionKey.generate()
            #expect(try await store.checkKeyRing().byKey == [old.id: 1])
            let rekeyed = RedisAppStore(redis: connection, keys: AppKeys(prefix: prefix), ring: KeyRing(current: new, previous: [old]))
            #expect(try await rekeyed.rekey() == 1)
            let onlyNew = RedisAppStore(redis: connection, keys: AppKeys(prefix: prefix), ring: KeyRing(current: new))
            #expect(try await onlyNew.nhRules(id: shop)?.rules == [rules[0], rotated])
            await #expect(throws: AppError.self) {
                try await RedisAppStore(redis: connection, keys: AppKeys(prefix: prefix), ring: KeyRing(current: old)).nhRules(id: shop)
            }

            // Removed whole.
            let cleared = try await onlyNew.update(id: shop, change: AppChange(nhRules: .some(nil)))
            let left = try await onlyNew.nhRules(id: shop)?.rules
            #expect(cleared.nhRules.isEmpty && left == [])
            await connection.close()
        }
    }

    @Test func rulesAHubCannotHaveAreRefusedByName() async throws {
        try await withRedisServer { server in
            let connection = RedisConnection(configuration: server.configuration)
            let store = RedisAppStore(
                redis: connection, keys: AppKeys(prefix: String(uniqueKeyPrefix("apps").dropLast())), ring: KeyRing(current: .generate()))
            let shop = try AppID("shop")
            _ = try await store.create(id: shop, name: "Shop", credentials: AppCredentials())
            let listen = NHAccessRule.generate(name: "Devices", rights: [.listen])
            var manageOnly = NHAccessRule.generate(name: "Admin", rights: [.manage])
            var spaced = NHAccessRule.generate(name: "Bad name", rights: [.send])
            for (rules, problem) in [
                ([listen, listen], "two rules have the same name"),
                ([manageOnly], "rule Admin: Manage goes with Listen and Send"),
                ([spaced], "rule name 'Bad name' must be 1 to 256 letters, digits, '.', '-' or '_'"),
                (Array(repeating: listen, count: 13), "a hub has at most 12 rules"),
            ] {
                await #expect(throws: AppError.invalid(field: "nhRules", problem)) {
                    try await store.update(id: shop, change: AppChange(nhRules: .some(rules)))
                }
            }
            manageOnly.rights = [.manage, .listen, .send]
            spaced.name = "Sender"
            spaced.primaryKey = "short"
            await #expect(
                throws: AppError.invalid(
                    field: "nhRules", "rule Sender's primary key must be 32 to 128 printable characters without ';' or '&'")
            ) {
                try await store.update(id: shop, change: AppChange(nhRules: .some([manageOnly, spaced])))
            }
            #expect(try await store.update(id: shop, change: AppChange(nhRules: .some([manageOnly, listen]))).nhRules.count == 2)
            await connection.close()
        }
    }
}
