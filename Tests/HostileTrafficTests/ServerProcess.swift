import HeraldTestSupport

/// The hostile suites' server: the test support's one launcher. Every call site lifts the
/// per-device allowance (`ServerProcess.liftedTargetLimits`): these attacks push one or two
/// phones far past it on purpose, to exercise the pipeline rather than the 429 path.
typealias ServerProcess = HeraldServeProcess
