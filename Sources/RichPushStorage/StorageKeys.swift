package import RichPushCore

/// Key names of everything RichPush keeps in Redis besides the queue.
///
/// Notification records, payloads and their status carry their queue partition's hash tag, so
/// that creating a notification (record + payload + job) is one script on one Cluster slot.
///
/// With `partitions` P > 1 the partitions are `q0` … `q<P-1>` and notification `id` lives in
/// partition `id mod P`: the keys named by an id carry that partition's tag whatever
/// ``partition`` is; the others (payloads, indexes, the webhook outbox) carry ``partition``'s.
/// ``inPartition(_:)`` and ``forNotification(_:)`` give the keys of one partition.
///
/// On Redis Cluster (`clusterSafe`), the registry (users, logins, API keys, installations,
/// tags, quotas) is written together by scripts, so its keys share one hash tag,
/// `<prefix>:{<prefix>-registry}:…`; on one Redis they keep their names, `<prefix>:…`.
///
/// Everything an app owns (its registry, notifications, payloads, ledgers, idempotency keys,
/// quotas, webhooks) is named under its ``app``: the default app's keys keep the names they had
/// before apps existed, so a deployment's data is the default app's without a step; another
/// app's start `<prefix>:app:<id>:` and keep the same hash tags (a notification's keys stay in
/// its queue partition's slot), except the registry's, which is the app's own on Redis Cluster
/// (`{<prefix>-registry-<id>}`) so that apps spread over the cluster. The queue, the notification
/// id sequence, the webhook outbox, provider pauses and dead tokens are the deployment's, shared
/// by every app: one worker fleet serves them all.
package struct StorageKeys: Sendable, Hashable {
    package let prefix: String
    /// Whether the registry's keys carry a hash tag of their own (Redis Cluster).
    package let clusterSafe: Bool
    /// The app whose keys these are.
    package let app: AppID
    /// Where the app's own keys start: `prefix` for the default app.
    private var base: String { app.isDefault ? prefix : "\(prefix):app:\(app.rawValue)" }
    /// Where the registry's keys start.
    private var registry: String {
        guard clusterSafe else { return base }
        return app.isDefault ? "\(prefix):{\(prefix)-registry}" : "\(base):{\(prefix)-registry-\(app.rawValue)}"
    }
    /// The partition of the keys not named by a notification id.
    package let partition: String
    /// How many partitions the notifications are spread over.
    package let partitions: Int

    package init(
        prefix: String = "richpush", partition: String = "q0", partitions: Int = 1, clusterSafe: Bool = false, app: AppID = .default
    ) {
        self.prefix = prefix
        self.clusterSafe = clusterSafe
        self.app = app
        self.partitions = max(1, partitions)
        // Past one partition the names are fixed (q0 …): any other name means the first.
        let named = self.partitions == 1 || (0..<self.partitions).contains { "q\($0)" == partition }
        self.partition = named ? partition : "q0"
    }

    /// The partitions' names: `partition` alone, or `q0` … `q<P-1>`.
    package var partitionNames: [String] { partitions == 1 ? [partition] : (0..<partitions).map { "q\($0)" } }

    /// The partition (index) of notification `id`.
    package func partitionIndex(ofNotification id: Int) -> Int { partitions == 1 ? 0 : ((id % partitions) + partitions) % partitions }

    /// The keys of partition `index` (0 ..< partitions).
    package func inPartition(_ index: Int) -> StorageKeys {
        partitions == 1
            ? self : StorageKeys(prefix: prefix, partition: "q\(index)", partitions: partitions, clusterSafe: clusterSafe, app: app)
    }

    /// The same keys for `app`'s data.
    package func forApp(_ app: AppID) -> StorageKeys {
        app == self.app
            ? self : StorageKeys(prefix: prefix, partition: partition, partitions: partitions, clusterSafe: clusterSafe, app: app)
    }

    /// The keys of notification `id`'s partition.
    package func forNotification(_ id: Int) -> StorageKeys { inPartition(partitionIndex(ofNotification: id)) }

    // Users and authentication
    func user(_ name: String) -> String { "\(registry):user:\(name)" }
    var users: String { "\(registry):users" }
    func loginPair(_ name: String, _ address: String) -> String { "\(registry):login:pair:\(name):\(address)" }
    /// The addresses with a login-failure record for this user (for `users unlock` without a SCAN).
    func loginPairs(_ name: String) -> String { "\(registry):login:pairs:\(name)" }
    func loginAddress(_ address: String) -> String { "\(registry):login:addr:\(address)" }
    /// Where credential changes are announced, so every API replica drops what it cached.
    package var credentialChanges: String { "\(prefix):auth:changed" }
    /// How a user or key of this app is named in credential caches and their announcements
    /// (``AppID/credentialName(_:)``).
    package func credentialName(_ name: String) -> String { app.credentialName(name) }
    func apiKey(_ id: String) -> String { "\(registry):apikey:\(id)" }
    func apiKeys(of user: String) -> String { "\(registry):apikeys:\(user)" }

    // Per-user quotas
    func quotaBucket(_ user: String) -> String { "\(registry):quota:\(user):bucket" }
    func quotaBytes(_ user: String) -> String { "\(registry):quota:\(user):bytes" }
    func quotaBytesLedger(_ user: String) -> String { "\(registry):quota:\(user):bytes-expiry" }

    // Installations
    func installation(_ id: String) -> String { "\(registry):inst:\(id)" }
    package func tag(_ tag: String) -> String { "\(registry):tag:\(tag)" }
    func handle(_ handle: String) -> String { handlePrefix + handle }
    var allInstallations: String { "\(registry):installations" }
    /// The installations a user owns, for the registration quota and removal of the user.
    func owned(by user: String) -> String { ownedPrefix + user }
    /// Tag → number of the user's installations carrying it, for the distinct-tags quota.
    func userTags(_ user: String) -> String { userTagsPrefix + user }
    var tagPrefix: String { "\(registry):tag:" }
    var installationPrefix: String { "\(registry):inst:" }
    var handlePrefix: String { "\(registry):handle:" }
    var ownedPrefix: String { "\(registry):owned:" }
    var userTagsPrefix: String { "\(registry):usertags:" }

    // Notifications (partition-tagged)
    private var tagged: String { "\(base):{\(partition)}" }
    private func tagged(_ id: Int) -> String { partitions == 1 ? tagged : "\(base):{q\(partitionIndex(ofNotification: id))}" }
    var notificationSequence: String { "\(prefix):seq:notification" }
    /// The data's ``SchemaVersion``: the deployment's, in the notification sequence's slot (its
    /// hash tag is the sequence's whole name, which has none), so that one script reads both; under
    /// the prefix, as an ACL's `~<prefix>:*` wants.
    var schemaVersion: String { "\(prefix):schema:{\(notificationSequence)}" }
    /// A notification's record: a hash of its fields (``RecordField``), which also holds its
    /// status (the stored state, `planned` and the counters) and shares its expiry.
    package func notification(_ id: Int) -> String { "\(tagged(id)):notif:\(id)" }
    func payload(_ hash: String) -> String { "\(tagged):payload:\(hash)" }
    func created(by user: String) -> String { "\(tagged):created:\(user)" }
    /// A user's idempotency key, by the SHA-256 of the key as sent (any printable text, bounded).
    func idempotency(user: String, keyDigest: String) -> String { "\(tagged):idem:\(user):\(keyDigest)" }
    package func devices(_ id: Int) -> String { "\(tagged(id)):devices:\(id)" }
    func fetchedBy(_ id: Int) -> String { "\(tagged(id)):fetched:\(id)" }
    func receipts(_ id: Int) -> String { "\(tagged(id)):receipts:\(id)" }
    /// The delivery ledger: installation → `R` (recorded) or `L:<until ms>:<owner>` (leased).
    package func ledger(_ id: Int) -> String { "\(tagged(id)):ledger:\(id)" }
    /// The failed attempts of each push of a notification: installation → count (only pushes
    /// that failed have a field). A job's retry limit is counted per push from here.
    package func attempts(_ id: Int) -> String { "\(tagged(id)):attempts:\(id)" }
    /// A throttled fan-out's batches sent in the last minute: `<batch>:<pushes>` by time.
    func throttle(_ id: Int) -> String { "\(tagged(id)):throttle:\(id)" }

    // Webhooks: events go into the partition's outbox from the same script that records what
    // they report; the registry and the deliveries share one hash tag of their own.
    /// The partition's webhook outbox (a stream read by the workers' dispatchers).
    package var webhookOutbox: String { "\(prefix):{\(partition)}:webhooks:outbox" }
    /// `<event>:<user>` (or `<event>:*` for all users) → how many webhooks want it; absent when
    /// none do, so recording costs one EXISTS while no webhook exists.
    package var webhookWants: String { "\(tagged):webhooks:wants" }
    private var hooks: String { app.isDefault ? "\(prefix):{webhooks}" : "\(base):{webhooks-\(app.rawValue)}" }
    func webhook(_ id: String) -> String { "\(hooks):hook:\(id)" }
    /// The apps other than the default that have had a webhook: the dispatchers' retry loop
    /// looks at their retries.
    package var webhookApps: String { "\(prefix):webhooks:apps" }
    var allWebhooks: String { "\(hooks):all" }
    func webhooks(of user: String) -> String { "\(hooks):user:\(user)" }
    func webhookAttempts(_ id: String) -> String { "\(hooks):attempts:\(id)" }
    func webhookDead(_ id: String) -> String { "\(hooks):dead:\(id)" }
    /// Deliveries waiting for their next attempt, scored by when it is due.
    var webhookRetries: String { "\(hooks):retries" }
    var webhookDeliveryPrefix: String { "\(hooks):delivery:" }
    func webhookDelivery(_ id: String) -> String { webhookDeliveryPrefix + id }

    // Provider back-pressure, shared by the fleet
    /// A pause of a provider (`fcm:<project>`): until when no worker sends to it.
    func providerPause(_ scope: String) -> String { "\(prefix):pause:\(scope)" }
    /// Device tokens a provider declared dead, scored by when.
    var goneTokens: String { "\(prefix):gone-tokens" }
    /// Devices (`<platform>:<handle>`) a provider asked to be left alone, scored by until when.
    var deviceBackOffs: String { "\(prefix):device-backoff" }
    /// Devices a worker's round of requests has claimed, each with `<until ms>:<owner>`: in the
    /// slot of ``deviceBackOffs``, which the claiming script reads too.
    var deviceClaims: String { "\(prefix):device-claims:{\(deviceBackOffs)}" }

    /// The key that signs the media URLs of alerts (``MediaURLSigner``), shared by every app.
    var mediaKey: String { "\(prefix):media-key" }
    /// What the workers estimate of an installation for the `auto` delivery (its background
    /// budget and whether it answers silent pushes), in the app's registry slot.
    func deliveryEstimate(_ installation: String) -> String { "\(registry):estimate:\(installation)" }
}
