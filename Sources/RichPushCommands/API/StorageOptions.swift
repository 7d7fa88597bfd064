import ArgumentParser
package import RichPushStorage

/// The key namespace of users, installations and notifications (the queue's prefix and
/// partitions; on Redis Cluster the registry's keys share a hash tag).
extension QueueOptions {
    package func storageKeys(_ redis: RedisOptions) -> StorageKeys {
        StorageKeys(prefix: prefix, partition: partition, partitions: partitions, clusterSafe: redis.isCluster)
    }
}
