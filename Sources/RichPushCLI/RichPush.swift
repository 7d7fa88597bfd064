import RichPushCommands

/// `richpush`: runs ``RichPushCommand`` (the commands live in RichPushCommands, a library, so that
/// `richpush-bench` can run `worker` and `api` with its additions).
@main
enum RichPush {
    static func main() async {
        await RichPushCommand.main()
    }
}
