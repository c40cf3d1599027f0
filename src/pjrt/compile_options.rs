//! The serialized `xla.CompileOptionsProto` (`xla/pjrt/proto/compile_options.proto`) that
//! `PJRT_Client_Compile` takes: one replica, one partition, no device fixed; every other field
//! left at its default.

/// `xla.ExecutableBuildOptionsProto`: the fields set here, with XLA's field numbers.
#[derive(Clone, PartialEq, prost::Message)]
struct ExecutableBuildOptionsProto {
    /// -1: no device fixed at compile time.
    #[prost(int64, tag = "1")]
    device_ordinal: i64,
    #[prost(int64, tag = "4")]
    num_replicas: i64,
    #[prost(int64, tag = "5")]
    num_partitions: i64,
}

/// `xla.CompileOptionsProto`: the build options only (argument layouts are left to the
/// plugin; arguments are passed with their byte strides).
#[derive(Clone, PartialEq, prost::Message)]
struct CompileOptionsProto {
    #[prost(message, optional, tag = "3")]
    executable_build_options: Option<ExecutableBuildOptionsProto>,
}

/// The bytes of the options for one computation on one device.
pub(super) fn single_device() -> Vec<u8> {
    let options = CompileOptionsProto {
        executable_build_options: Some(ExecutableBuildOptionsProto {
            device_ordinal: -1,
            num_replicas: 1,
            num_partitions: 1,
        }),
    };
    prost::Message::encode_to_vec(&options)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_options_are_xlas_bytes() {
        // Field 3 (15 bytes): field 1 = -1 (ten bytes of varint), field 4 = 1, field 5 = 1.
        let mut expected = vec![0x1a, 15, 0x08];
        expected.extend([0xff; 9]);
        expected.extend([0x01, 0x20, 0x01, 0x28, 0x01]);
        expected[1] = (expected.len() - 2) as u8;
        assert_eq!(super::single_device(), expected);
    }
}
