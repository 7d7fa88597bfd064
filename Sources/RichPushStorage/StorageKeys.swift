/// Key names of everything RichPush keeps in Redis besides the queue.
///
/// Notification records, payloads and their status carry the queue partition's hash tag, so that
/// creating a notification (record + payload + job) is one MULTI/EXEC on one Cluster slot.
public struct StorageKeys: Sendable, Hashable {
    public let prefix: String
    public let partition: String

    public init(prefix: String = "richpush", partition: String = "q0") {
        self.prefix = prefix
        self.partition = partition
    }

    // Users and authentication
    func user(_ name: String) -> String { "\(prefix):user:\(name)" }
    var users: String { "\(prefix):users" }
    func userFailures(_ name: String) -> String { "\(prefix):authfail:user:\(name)" }
    func addressFailures(_ address: String) -> String { "\(prefix):authfail:addr:\(address)" }

    // Installations
    func installation(_ id: String) -> String { "\(prefix):inst:\(id)" }
    public func tag(_ tag: String) -> String { "\(prefix):tag:\(tag)" }
    func handle(_ handle: String) -> String { "\(prefix):handle:\(handle)" }
    var allInstallations: String { "\(prefix):installations" }

    // Notifications (partition-tagged)
    private var tagged: String { "\(prefix):{\(partition)}" }
    var notificationSequence: String { "\(prefix):seq:notification" }
    public func notification(_ id: Int) -> String { "\(tagged):notif:\(id)" }
    func payload(_ hash: String) -> String { "\(tagged):payload:\(hash)" }
    func created(by user: String) -> String { "\(tagged):created:\(user)" }
    public func status(_ id: Int) -> String { "\(tagged):status:\(id)" }
    public func devices(_ id: Int) -> String { "\(tagged):devices:\(id)" }
    func fetchedBy(_ id: Int) -> String { "\(tagged):fetched:\(id)" }
    func deliveryGuard(_ id: Int, _ installation: String) -> String { "\(tagged):sent:\(id):\(installation)" }
}
