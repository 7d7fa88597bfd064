/// A selection of delayed jobs as the queues page's checkboxes name them,
/// `<partition>/<due>/<key>` (the key: a scheduled send's `<app>:<id>`, a retry's origin), by
/// partition and due time: where to find each with ``JobQueue/delayedJobs(dueAt:)``.
struct DelayedReferences {
    let byPartition: [String: [Int64: Set<String>]]

    /// How many distinct jobs are named.
    var count: Int { byPartition.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } } }

    /// 1 to `most` references, each of a known partition, a due time and a key `isKey` accepts;
    /// `noun` and `form` name them in the 400s (`bad_selection`, `bad_id`).
    init(_ references: [String], partitions: Set<String>, most: Int, noun: String, form: String, isKey: (String) -> Bool) throws {
        guard (1...most).contains(references.count) else {
            throw APIError.badRequest("select 1 to \(most) \(noun)", code: "bad_selection")
        }
        var byPartition: [String: [Int64: Set<String>]] = [:]
        for reference in Set(references) {
            let parts = reference.split(separator: "/", maxSplits: 2).map(String.init)
            guard parts.count == 3, partitions.contains(parts[0]), let due = Int64(parts[1]), due >= 0, isKey(parts[2]) else {
                throw APIError.badRequest("'\(reference.prefix(80))' is not a reference of \(noun) (\(form))", code: "bad_id")
            }
            byPartition[parts[0], default: [:]][due, default: []].insert(parts[2])
        }
        self.byPartition = byPartition
    }

    /// The audit log's target: the first 20, and how many in all.
    static func target(_ references: [String]) -> String {
        let unique = Array(Set(references)).sorted()
        return unique.prefix(20).joined(separator: " ") + (unique.count > 20 ? " … (\(unique.count) in all)" : "")
    }
}
