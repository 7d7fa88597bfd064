import Hiredis

/// The stream entry layout, version 1: flat field/value pairs
/// `v 1 type <type> payload <bytes> enq <ms> app <app> lane <now|bulk> [attempt <n>] [origin <id>]
/// [err <text>] [fl <app>]` (`fl`: the delivery holds a jobs-in-flight count of that app). Every
/// job written here names its `app` and `lane`; an entry added by hand without them reads as the
/// shared app's, lane `now`.
/// Fields appended later win over earlier ones of the same name (scripts append `err`, `origin`).
extension Job {
    static let encodingVersion = "1"

    /// The fields of a new job, enqueued now.
    static func fields(for request: JobRequest, now: Int64) -> [any RedisArgument] {
        [
            "v", encodingVersion, "type", request.type, "payload", request.payload, "enq", now,
            "app", request.app ?? JobRequest.sharedApp, "lane", request.lane.rawValue,
        ]
    }

    /// Appends the fields of a new job to a command (the hot path: no existential boxing).
    static func appendFields(of request: JobRequest, now: Int64, to command: inout RedisCommand) {
        command.append("v")
        command.append(encodingVersion)
        command.append("type")
        command.append(request.type)
        command.append("payload")
        command.append(request.payload)
        command.append("enq")
        command.append(now)
        command.append("app")
        command.append(request.app ?? JobRequest.sharedApp)
        command.append("lane")
        command.append(request.lane.rawValue)
    }

    /// Decodes a stream entry `[id, [field, value, …]]`; an entry that cannot be decoded is a
    /// ``JobDecodingError`` carrying its id, so the worker can dead-letter it and go on.
    init(entry: RedisValue) throws(JobDecodingError) {
        guard let parts = entry.array, parts.count == 2, let id = parts[0].string else {
            throw JobDecodingError(id: nil, reason: "not a stream entry: \(entry)")
        }
        guard let flat = parts[1].array, flat.count % 2 == 0 else {
            throw JobDecodingError(id: id, reason: "entry has no field/value pairs")
        }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string else { continue }
            fields[name] = flat[index + 1]
        }
        guard let version = fields["v"]?.string else { throw JobDecodingError(id: id, reason: "missing encoding version 'v'") }
        guard version == Self.encodingVersion else {
            throw JobDecodingError(id: id, reason: "unsupported encoding version \(version) (this worker reads \(Self.encodingVersion))")
        }
        guard let type = fields["type"]?.string, !type.isEmpty else { throw JobDecodingError(id: id, reason: "missing job type") }
        guard let payload = fields["payload"]?.bytes else { throw JobDecodingError(id: id, reason: "missing payload") }
        guard let enqueued = fields["enq"]?.string.flatMap({ Int64($0) }) else {
            throw JobDecodingError(id: id, reason: "missing or bad enqueue time 'enq'")
        }
        let attempt = fields["attempt"]?.int ?? 0
        self.init(
            id: id, type: type, payload: payload, attempt: attempt, enqueuedAt: enqueued,
            origin: fields["origin"]?.string, lastError: fields["err"]?.string,
            failedOn: fields["fp"]?.string.map { $0.split(separator: ",").map(String.init) } ?? [], app: fields["app"]?.string,
            lane: fields["lane"]?.string.flatMap(JobLane.init(rawValue:)) ?? .now, inFlightApp: fields["fl"]?.string)
    }
}

/// A stream entry that is not a job this worker can read (a poison message).
package struct JobDecodingError: Error, Sendable, CustomStringConvertible {
    package let id: String?
    package let reason: String
    package var description: String { "undecodable job \(id ?? "?"): \(reason)" }
}
