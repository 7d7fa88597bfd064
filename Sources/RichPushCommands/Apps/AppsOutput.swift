import Foundation
import RichPushApps
import RichPushCore

/// What the `apps` commands share: a store on a fresh connection, errors as CLI messages, an app as JSON.
enum AppsOutput {
    static func withStore<T>(
        _ redis: RedisOptions, _ queue: QueueOptions, _ ring: KeyRing?,
        _ body: (RedisAppStore) async throws -> T
    ) async throws -> T {
        let connection = try await connect(redis, clientName: "richpush-apps")
        do {
            let result = try await body(RedisAppStore(redis: connection, keys: AppKeys(prefix: queue.prefix), ring: ring))
            await connection.close()
            return result
        } catch let error as AppError {
            await connection.close()
            throw CLIError(error.description)
        } catch {
            await connection.close()
            throw error
        }
    }

    static func checked<T>(_ body: () throws(AppError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CLIError(error.description)
        }
    }

    static func print(_ app: AppSummary) {
        var object: [String: Any] = ["id": app.id.rawValue, "name": app.name, "version": app.version]
        // The shape GET /api/apps/{id} answers with.
        if app.createdAt > 0 { object["createdAt"] = UTCTimestamp.iso8601(milliseconds: app.createdAt) }
        if app.updatedAt > 0 { object["updatedAt"] = UTCTimestamp.iso8601(milliseconds: app.updatedAt) }
        for (platform, shown) in app.credentials { object[platform.rawValue] = shown }
        if let locale = app.defaultLocale { object["defaultLocale"] = locale }
        if let delivery = app.defaultDelivery { object["defaultDelivery"] = delivery.rawValue }
        object["weight"] = app.scheduling.weight
        if let cap = app.scheduling.maxInFlight { object["maxInFlight"] = cap }
        object["paused"] = app.paused
        if !app.nhRules.isEmpty { object["nhRules"] = app.nhRules }
        object["limits"] = [
            "notificationsPerMinute": app.limits.notificationsPerMinute, "audience": app.limits.audience,
            "payloadBytes": app.limits.payloadBytes,
        ]
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}
