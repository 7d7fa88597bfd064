import Hiredis
import RedisTestSupport
import RichPushCore
import RichPushQueue
import Testing

@testable import RichPushStorage

/// Notification Hubs' sends keep what makes them NH's in the record: a native send its payload,
/// format and headers; a template send that only devices with a template get. Another process
/// (a worker) reads them back from Redis as they were created.
@Suite("NH sends' records")
struct NHRecordFieldsTests {
    @Test func aNativeAndATemplateOnlySendReadBackInAnotherProcess() async throws {
        try await DeliveryLedgerTests.withServerAndStore { server, redis, keys, store in
            var native = DerivedStateTests.draft
            native.native = NativePush(format: .apns, body: #"{"aps":{"content-available":1}}"#, headers: ["apns-priority": "5"])
            var template = DerivedStateTests.draft
            template.templatesOnly = true
            let ids = [
                try await store.create(native) { _ in "h" }.id, try await store.create(template) { _ in "h" }.id,
                try await store.create(DerivedStateTests.draft) { _ in "h" }.id,
            ]
            // A store of its own: nothing cached from the creates.
            let reader = RedisNotificationStore(
                redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                retention: .seconds(3600))
            var records: [RichNotification] = []
            for id in ids { records.append(try #require(try await reader.notification(id: id))) }
            #expect(records[0].native == native.native && !records[0].templatesOnly)
            #expect(records[1].native == nil && records[1].templatesOnly)
            #expect(records[2].native == nil && !records[2].templatesOnly, "a plain send's record has neither field")
            #expect(try await redis.send("HEXISTS", keys.notification(ids[2]), RecordField.native.rawValue).int == 0)
            // A native field no reader can read is no record: rendered instead, it would reach
            // devices the sender did not write for.
            try await redis.send("HSET", keys.notification(ids[1]), RecordField.native.rawValue, "{not json")
            let fresh = RedisNotificationStore(
                redis: redis, keys: keys, queue: JobQueue(redis: redis, configuration: JobQueueConfiguration(prefix: keys.prefix)),
                retention: .seconds(3600))
            #expect(try await fresh.notification(id: ids[1]) == nil)
        }
    }
}
