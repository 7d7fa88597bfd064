import Foundation
@testable import Hiredis
import RedisTestSupport
@testable import RichPushAdapters
@testable import RichPushApps
@testable import RichPushCredentials
@testable import RichPushQueue
@testable import RichPushStorage
import Testing

/// Every Lua script of the code base compiles in a real Redis, under the SHA-1 the client computes
/// for it, whether or not another test happens to run it; and the list here is every script
/// there is (a new `RedisScript(` in Sources must be added to it).
@Suite("Every Lua script")
struct LuaScriptsTests {
    static let scripts: [(name: String, script: RedisScript)] = [
        ("QueueScripts.enqueueOnce", QueueScripts.enqueueOnce), ("QueueScripts.retry", QueueScripts.retry),
        ("QueueScripts.schedule", QueueScripts.schedule), ("QueueScripts.promote", QueueScripts.promote),
        ("QueueScripts.deadLetter", QueueScripts.deadLetter), ("QueueScripts.reclaim", QueueScripts.reclaim),
        ("QueueScripts.trim", QueueScripts.trim), ("QueueScripts.replayDead", QueueScripts.replayDead),
        ("QueueScripts.removeIdleConsumers", QueueScripts.removeIdleConsumers),
        ("RedisNotificationStore.createScript", RedisNotificationStore.createScript),
        ("RedisNotificationStore.cancelScript", RedisNotificationStore.cancelScript),
        ("RedisNotificationStore.fetchScript", RedisNotificationStore.fetchScript),
        ("RedisNotificationStore.receiptScript", RedisNotificationStore.receiptScript),
        ("RedisDeliveryLedger.leaseScript", RedisDeliveryLedger.leaseScript),
        ("RedisDeliveryLedger.expiredScript", RedisDeliveryLedger.expiredScript),
        ("RedisDeliveryLedger.throttleScript", RedisDeliveryLedger.throttleScript),
        ("RedisDeliveryLedger.recordScript", RedisDeliveryLedger.recordScript),
        ("RedisDeliveryLedger.deadLetteredScript", RedisDeliveryLedger.deadLetteredScript),
        ("RedisDeliveryLedger.reviveScript", RedisDeliveryLedger.reviveScript),
        ("RedisNotificationStore.claimScript", RedisNotificationStore.claimScript),
        ("RedisNotificationStore.releaseScript", RedisNotificationStore.releaseScript),
        ("RedisNotificationStore.quotaScript", RedisNotificationStore.quotaScript),
        ("RedisProviderHolds.holdScript", RedisProviderHolds.holdScript),
        ("RedisUserStore.createScript", RedisUserStore.createScript),
        ("RedisUserStore.reserveScript", RedisUserStore.reserveScript),
        ("RedisUserStore.successScript", RedisUserStore.successScript),
        ("RedisWebhookStore.createScript", RedisWebhookStore.createScript),
        ("RedisWebhookStore.lowerScript", RedisWebhookStore.lowerScript),
        ("RedisWebhookStore.claimScript", RedisWebhookStore.claimScript),
        ("RedisInstallationStore.saveScript", RedisInstallationStore.saveScript),
        ("RedisInstallationStore.removeScript", RedisInstallationStore.removeScript),
        ("RedisAPIKeyStore.createScript", RedisAPIKeyStore.createScript),
        ("RedisAPIKeyStore.revokeScript", RedisAPIKeyStore.revokeScript),
        ("SharedToken.storeScript", SharedToken.storeScript), ("SharedToken.unlockScript", SharedToken.unlockScript),
        ("HubHold.publishOrHold", HubHold.publishOrHold), ("HubHold.takeScript", HubHold.takeScript),
        ("HubHold.expireScript", HubHold.expireScript),
        ("RedisAppStore.writeScript", RedisAppStore.writeScript), ("RedisAppStore.removeScript", RedisAppStore.removeScript),
        ("RedisAppStore.resealScript", RedisAppStore.resealScript),
    ]

    @Test func eachCompilesUnderItsSHA() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            let replies = try await redis.pipeline(Self.scripts.map { RedisCommand("SCRIPT", "LOAD", $0.script.source) })
            for ((name, script), reply) in zip(Self.scripts, replies) {
                #expect(reply.errorMessage == nil, "\(name) does not compile: \(reply.errorMessage ?? "")")
                #expect(reply.string == script.sha1, "\(name): Redis names it \(reply.string ?? "-"), the client \(script.sha1)")
            }
            await redis.close()
        }
    }

    @Test func theListHoldsEveryScriptInSources() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var found = 0
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            found += text.components(separatedBy: "= RedisScript(").count - 1
        }
        #expect(found == Self.scripts.count, "Sources define \(found) scripts; this test lists \(Self.scripts.count)")
        #expect(Set(Self.scripts.map(\.script.sha1)).count == Self.scripts.count, "two entries name the same script")
    }
}
