import ArgumentParser
import RichPushStorage

/// The key namespace of users, installations and notifications (the queue's prefix and partition).
extension QueueOptions {
    var storageKeys: StorageKeys { StorageKeys(prefix: prefix, partition: partition, partitions: partitions) }
}
