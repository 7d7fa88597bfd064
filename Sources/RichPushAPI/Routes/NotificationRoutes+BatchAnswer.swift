import HTTPTypes
import Hummingbird
import RichPushCore

/// What became of one item of a batch.
enum BatchOutcome {
    /// Created, or (`replayed`) created earlier by a request with the item's idempotency key.
    case accepted(id: Int, target: String, replayed: Bool)
    /// A dry run's item that passed every check a create makes.
    case checked(target: String)
    /// Refused, with what a single create would have answered: status, code, message, Retry-After.
    case rejected(APIError)

    var isAccepted: Bool {
        if case .rejected = self { return false }
        return true
    }
}

extension NotificationRoutes {
    /// The answer to a batch, 200 whatever became of its items: `{"accepted", "rejected",
    /// "results"}` (and `"dryRun": true`), one result per item in order, each with the HTTP status
    /// the item alone would have got. Written directly, keys sorted as `JSONResponse.encode`
    /// writes them: it runs for up to 1,000 items.
    static func batchAnswer(_ outcomes: [BatchOutcome], dryRun: Bool) -> Response {
        JSONResponse.written(batchJSON(outcomes, dryRun: dryRun), status: .ok)
    }

    static func batchJSON(_ outcomes: [BatchOutcome], dryRun: Bool) -> [UInt8] {
        var results: [UInt8] = [UInt8(ascii: "[")]
        results.reserveCapacity(outcomes.count * 180)
        for (index, outcome) in outcomes.enumerated() {
            if index > 0 { results.append(UInt8(ascii: ",")) }
            results.append(contentsOf: result(outcome, index: index))
        }
        results.append(UInt8(ascii: "]"))
        let accepted = outcomes.count(where: \.isAccepted)
        var json = JSONWriter(capacity: results.count + 64)
        json.beginObject()
        json.field("accepted", accepted)
        if dryRun { json.field("dryRun", true) }
        json.field("rejected", outcomes.count - accepted)
        json.key("results")
        json.raw(results)
        json.endObject()
        return json.bytes
    }

    private static func result(_ outcome: BatchOutcome, index: Int) -> [UInt8] {
        var json = JSONWriter(capacity: 200)
        json.beginObject()
        switch outcome {
        case .accepted(let id, let target, let replayed):
            let location = "/api/notifications/\(id)"
            json.field("httpStatus", Int(HTTPResponse.Status.accepted.code))
            json.field("id", String(id))
            json.field("index", index)
            json.field("payload", location)
            if replayed { json.field("replayed", true) }
            json.field("status", "\(location)/status")
            json.field("target", target)
        case .checked(let target):
            json.field("httpStatus", Int(HTTPResponse.Status.ok.code))
            json.field("index", index)
            json.field("target", target)
        case .rejected(let error):
            json.key("error")
            json.beginObject()
            json.field("code", error.code)
            json.field("message", error.message)
            json.endObject()
            json.field("httpStatus", Int(error.status.code))
            json.field("index", index)
            if let retryAfter = error.headers[.retryAfter].flatMap({ Int($0) }) { json.field("retryAfter", retryAfter) }
        }
        json.endObject()
        return json.bytes
    }
}
