import Foundation
import RedisTestSupport
import RichPushBench
import RichPushCore
import Testing

@testable import Hiredis
@testable import RichPushAdapters
@testable import RichPushApps
@testable import RichPushCredentials
@testable import RichPushQueue
@testable import RichPushStorage

/// Every Lua script of the code base compiles in a real Redis, under the SHA-1 the client computes
/// for it, whether or not another test happens to run it; and the list here is every script
/// there is (a new `RedisScript(` in Sources must be added to it).
@Suite("Every Lua script")
struct LuaScriptsTests {
    static let scripts: [(name: String, script: RedisScript)] = [
        ("QueueScripts.enqueueOnce", QueueScripts.enqueueOnce.script), ("QueueScripts.retry", QueueScripts.retry.script),
        ("QueueScripts.schedule", QueueScripts.schedule.script), ("QueueScripts.promote", QueueScripts.promote.script),
        ("QueueScripts.deadLetter", QueueScripts.deadLetter.script), ("QueueScripts.reclaim", QueueScripts.reclaim.script),
        ("QueueScripts.trim", QueueScripts.trim.script), ("QueueScripts.replayDead", QueueScripts.replayDead.script),
        ("QueueScripts.removeIdleConsumers", QueueScripts.removeIdleConsumers.script),
        ("QueueScripts.enqueue", QueueScripts.enqueue.script), ("QueueScripts.take", QueueScripts.take.script),
        ("QueueScripts.acknowledge", QueueScripts.acknowledge.script),
        ("RedisNotificationStore.createScript", RedisNotificationStore.createScript.script),
        ("RedisNotificationStore.cancelScript", RedisNotificationStore.cancelScript.script),
        ("IDBlocks.reserveScript", IDBlocks.reserveScript.script), ("SchemaVersion.stampScript", SchemaVersion.stampScript.script),
        ("SchemaMigration.mergeScript", SchemaMigration.mergeScript.script), ("QueueBacklogSkip.script", QueueBacklogSkip.script.script),
        ("RedisNotificationStore.readableScript", RedisNotificationStore.readableScript.script),
        ("RedisNotificationStore.fetchScript", RedisNotificationStore.fetchScript.script),
        ("RedisNotificationStore.receiptScript", RedisNotificationStore.receiptScript.script),
        ("RedisDeliveryLedger.leaseScript", RedisDeliveryLedger.leaseScript.script),
        ("RedisDeliveryLedger.expiredScript", RedisDeliveryLedger.expiredScript.script),
        ("RedisDeliveryLedger.throttleScript", RedisDeliveryLedger.throttleScript.script),
        ("RedisDeliveryLedger.recordScript", RedisDeliveryLedger.recordScript.script),
        ("RedisDeliveryLedger.deadLetteredScript", RedisDeliveryLedger.deadLetteredScript.script),
        ("RedisDeliveryLedger.reviveScript", RedisDeliveryLedger.reviveScript.script),
        ("RedisNotificationStore.claimScript", RedisNotificationStore.claimScript.script),
        ("RedisNotificationStore.releaseScript", RedisNotificationStore.releaseScript.script),
        ("RedisNotificationStore.quotaScript", RedisNotificationStore.quotaScript.script),
        ("RedisProviderPauses.pauseScript", RedisProviderPauses.pauseScript.script),
        ("RedisDeviceBackOffs.claimScript", RedisDeviceBackOffs.claimScript.script),
        ("RedisDeviceBackOffs.releaseScript", RedisDeviceBackOffs.releaseScript.script),
        ("RedisUserStore.createScript", RedisUserStore.createScript.script),
        ("RedisUserStore.reserveScript", RedisUserStore.reserveScript.script),
        ("RedisUserStore.successScript", RedisUserStore.successScript.script),
        ("RedisWebhookStore.createScript", RedisWebhookStore.createScript.script),
        ("RedisWebhookStore.lowerScript", RedisWebhookStore.lowerScript.script),
        ("RedisWebhookStore.claimScript", RedisWebhookStore.claimScript.script),
        ("RedisInstallationStore.saveScript", RedisInstallationStore.saveScript.script),
        ("RedisInstallationStore.removeScript", RedisInstallationStore.removeScript.script),
        ("RedisAPIKeyStore.createScript", RedisAPIKeyStore.createScript.script),
        ("RedisAPIKeyStore.revokeScript", RedisAPIKeyStore.revokeScript.script),
        ("SharedToken.storeScript", SharedToken.storeScript.script), ("SharedToken.unlockScript", SharedToken.unlockScript.script),
        ("OfflineStore.publishOrHold", OfflineStore.publishOrHold.script), ("OfflineStore.takeScript", OfflineStore.takeScript.script),
        ("OfflineStore.expireScript", OfflineStore.expireScript.script),
        ("RedisAppStore.writeScript", RedisAppStore.writeScript.script), ("RedisAppStore.removeScript", RedisAppStore.removeScript.script),
        ("RedisAppStore.resealScript", RedisAppStore.resealScript.script),
        ("QueueScripts.appStats", QueueScripts.appStats.script), ("QueueScripts.recountInFlight", QueueScripts.recountInFlight.script),
        ("RedisConsoleStore.putScript", RedisConsoleStore.putScript.script),
        ("RedisConsoleStore.takeScript", RedisConsoleStore.takeScript.script),
        ("QueueScripts.delayedSlice", QueueScripts.delayedSlice.script), ("QueueScripts.deadSlice", QueueScripts.deadSlice.script),
        ("QueueScripts.delayedPage", QueueScripts.delayedPage.script), ("QueueScripts.pause", QueueScripts.pause.script),
        ("QueueScripts.resume", QueueScripts.resume.script),
        ("QueueScripts.countFailures", QueueScripts.countFailures.script),
    ]

    /// The scripts declared by name (``LuaScript``): their hand-written Lua is checked against
    /// their declarations.
    static let declarations: [(name: String, declaration: any LuaDeclaration)] = [
        ("RedisNotificationStore.createScript", RedisNotificationStore.createScript),
        ("RedisNotificationStore.cancelScript", RedisNotificationStore.cancelScript),
        ("RedisNotificationStore.readableScript", RedisNotificationStore.readableScript),
        ("RedisNotificationStore.fetchScript", RedisNotificationStore.fetchScript),
        ("RedisNotificationStore.receiptScript", RedisNotificationStore.receiptScript),
        ("RedisNotificationStore.claimScript", RedisNotificationStore.claimScript),
        ("RedisNotificationStore.releaseScript", RedisNotificationStore.releaseScript),
        ("RedisNotificationStore.quotaScript", RedisNotificationStore.quotaScript),
        ("RedisDeliveryLedger.leaseScript", RedisDeliveryLedger.leaseScript),
        ("RedisDeliveryLedger.expiredScript", RedisDeliveryLedger.expiredScript),
        ("RedisDeliveryLedger.throttleScript", RedisDeliveryLedger.throttleScript),
        ("RedisDeliveryLedger.recordScript", RedisDeliveryLedger.recordScript),
        ("RedisDeliveryLedger.deadLetteredScript", RedisDeliveryLedger.deadLetteredScript),
        ("RedisDeliveryLedger.reviveScript", RedisDeliveryLedger.reviveScript),
        ("QueueScripts.enqueueOnce", QueueScripts.enqueueOnce), ("QueueScripts.schedule", QueueScripts.schedule),
        ("QueueScripts.retry", QueueScripts.retry), ("QueueScripts.deadLetter", QueueScripts.deadLetter),
        ("QueueScripts.promote", QueueScripts.promote), ("QueueScripts.reclaim", QueueScripts.reclaim),
        ("QueueScripts.trim", QueueScripts.trim),
        ("QueueScripts.replayDead", QueueScripts.replayDead), ("QueueScripts.removeIdleConsumers", QueueScripts.removeIdleConsumers),
        ("QueueScripts.enqueue", QueueScripts.enqueue), ("QueueScripts.take", QueueScripts.take),
        ("QueueScripts.acknowledge", QueueScripts.acknowledge),
        ("RedisProviderPauses.pauseScript", RedisProviderPauses.pauseScript),
        ("RedisDeviceBackOffs.claimScript", RedisDeviceBackOffs.claimScript),
        ("RedisDeviceBackOffs.releaseScript", RedisDeviceBackOffs.releaseScript),
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
        ("SharedToken.storeScript", SharedToken.storeScript),
        ("SharedToken.unlockScript", SharedToken.unlockScript),
        ("OfflineStore.publishOrHold", OfflineStore.publishOrHold),
        ("OfflineStore.takeScript", OfflineStore.takeScript),
        ("OfflineStore.expireScript", OfflineStore.expireScript),
        ("RedisAppStore.writeScript", RedisAppStore.writeScript),
        ("RedisAppStore.removeScript", RedisAppStore.removeScript),
        ("RedisAppStore.resealScript", RedisAppStore.resealScript),
        ("QueueScripts.appStats", QueueScripts.appStats), ("QueueScripts.recountInFlight", QueueScripts.recountInFlight),
        ("RedisConsoleStore.putScript", RedisConsoleStore.putScript), ("RedisConsoleStore.takeScript", RedisConsoleStore.takeScript),
        ("QueueScripts.delayedSlice", QueueScripts.delayedSlice), ("QueueScripts.deadSlice", QueueScripts.deadSlice),
        ("QueueScripts.countFailures", QueueScripts.countFailures),
    ]

    /// Each declared script's body reads only names: no `KEYS[…]`, no `ARGV[…]` but a declared
    /// list's elements; every name it reads is declared (by the declaration, a shared constant
    /// or the body itself) and every name the declaration binds is read.
    @Test func eachBodyAgreesWithItsDeclaration() {
        for (name, declaration) in Self.declarations {
            for problem in LuaNameCheck.problems(of: declaration, constants: NotificationLua.constants + SchedulerField.constants) {
                Issue.record("\(name): \(problem)")
            }
        }
    }

    /// Probe values of the arguments that must hold a name, not a number.
    static let examples = [
        "state": DeliveryState.queued.rawValue, "counter": DeliveryCounter.fetched.rawValue, "tags": "[]",
        "changeJSON": #"{"name":"probe","set":{},"remove":[]}"#, "fieldsJSON": "{}",
    ]

    /// Each declared script runs in a real Redis on the keys and arguments its declaration
    /// produces (lists of two, sections present, two items): its prelude and body read what the
    /// declaration sends, without a Lua error (a Redis command may refuse the probe's values).
    @Test func eachRunsOnWhatItsDeclarationSends() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration)
            for (name, declaration) in Self.declarations {
                let (keys, arguments) = LuaNameCheck.probe(declaration, prefix: "probe:{p}:\(name)", examples: Self.examples)
                let reply = try await redis.run(declaration.script, calls: [(keys, arguments)])[0]
                // A command's refusal of probe values (NOGROUP on a stream with no group) is no
                // disagreement; a Lua error is.
                let lua = reply.errorMessage.map(LuaNameCheck.isLuaError) ?? false
                #expect(!lua, "\(name) fails on its declaration's call: \(reply.errorMessage ?? "")\n\(declaration.script.source)")
            }
            await redis.close()
        }
    }

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
            // LuaScript.swift makes the RedisScript of each LuaScript.
            guard file.pathExtension == "swift", file.lastPathComponent != "LuaScript.swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            found += text.components(separatedBy: "= RedisScript(").count - 1 + text.components(separatedBy: "= LuaScript<").count - 1
        }
        #expect(found == Self.scripts.count, "Sources define \(found) scripts; this test lists \(Self.scripts.count)")
        #expect(Set(Self.scripts.map(\.script.sha1)).count == Self.scripts.count, "two entries name the same script")
    }
}
