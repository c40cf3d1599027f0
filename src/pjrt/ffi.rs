//! The few declarations of XLA's PJRT C API (`xla/pjrt/c/pjrt_c_api.h`) that the client uses,
//! laid out as the header lays them out (`#[repr(C)]`, the same field order and types).
//!
//! Every argument struct starts with `struct_size` and `extension_start`; `struct_size` is set
//! as the header's `PJRT_DEFINE_STRUCT_TRAITS` sets `<name>_STRUCT_SIZE`: the offset of the
//! last field declared plus its size (`args!`'s `last`). The `PJRT_Api` table is declared up to
//! `PJRT_Buffer_ToHostBuffer`, the last entry used; a plugin's table is checked to reach that
//! far before any entry is read (`Api::covers_used_entries`). C enums are `i32`.

use std::ffi::{c_char, c_void};

/// `PJRT_API_MAJOR` of the header these declarations follow: a plugin of another major
/// version has another ABI.
pub(super) const API_MAJOR: i32 = 0;

/// Opaque `PJRT_Error`.
#[repr(C)]
pub(super) struct PjrtError {
    _private: [u8; 0],
}
/// Opaque `PJRT_Client`.
#[repr(C)]
pub(super) struct PjrtClient {
    _private: [u8; 0],
}
/// Opaque `PJRT_Device`.
#[repr(C)]
pub(super) struct PjrtDevice {
    _private: [u8; 0],
}
/// Opaque `PJRT_DeviceDescription`.
#[repr(C)]
pub(super) struct PjrtDeviceDescription {
    _private: [u8; 0],
}
/// Opaque `PJRT_Event`.
#[repr(C)]
pub(super) struct PjrtEvent {
    _private: [u8; 0],
}
/// Opaque `PJRT_Executable`.
#[repr(C)]
pub(super) struct PjrtExecutable {
    _private: [u8; 0],
}
/// Opaque `PJRT_LoadedExecutable`.
#[repr(C)]
pub(super) struct PjrtLoadedExecutable {
    _private: [u8; 0],
}
/// Opaque `PJRT_Buffer`.
#[repr(C)]
pub(super) struct PjrtBuffer {
    _private: [u8; 0],
}

/// `PJRT_STRUCT_SIZE(type, last_field)`: the offset of `last_field` plus its size.
macro_rules! struct_size {
    ($t:ty, $last:ident) => {{
        fn field_size<F>(_: impl Fn(&$t) -> &F) -> usize {
            std::mem::size_of::<F>()
        }
        std::mem::offset_of!($t, $last) + field_size(|s: &$t| &s.$last)
    }};
}

/// An argument struct of the header: `struct_size`, `extension_start`, then the fields given;
/// `new()` is all zeros (null pointers, zero counts, `None` callbacks) with `struct_size` set.
macro_rules! args {
    ($(#[$doc:meta])* $name:ident, last = $last:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[repr(C)]
        pub(super) struct $name {
            pub(super) struct_size: usize,
            pub(super) extension_start: *mut c_void,
            $(pub(super) $field: $ty,)*
        }

        impl $name {
            pub(super) fn new() -> Self {
                // SAFETY: every field is an integer, a `bool`, a raw pointer or an `Option` of a
                // function pointer, for all of which all-zero bytes are a valid value.
                let mut args: Self = unsafe { std::mem::zeroed() };
                args.struct_size = struct_size!($name, $last);
                args
            }
        }
    };
}

args!(
    /// `PJRT_Error_Destroy_Args`.
    ErrorDestroyArgs, last = error { error: *mut PjrtError }
);
args!(
    /// `PJRT_Error_Message_Args`.
    ErrorMessageArgs, last = message_size { error: *const PjrtError, message: *const c_char, message_size: usize }
);
args!(
    /// `PJRT_Error_GetCode_Args`.
    ErrorGetCodeArgs, last = code { error: *const PjrtError, code: i32 }
);
args!(
    /// `PJRT_Plugin_Initialize_Args`.
    PluginInitializeArgs, last = extension_start {}
);
args!(
    /// `PJRT_Event_Destroy_Args`.
    EventDestroyArgs, last = event { event: *mut PjrtEvent }
);
args!(
    /// `PJRT_Event_Await_Args`.
    EventAwaitArgs, last = event { event: *mut PjrtEvent }
);
args!(
    /// `PJRT_Client_Create_Args` (no options, no key-value store callbacks).
    ClientCreateArgs, last = kv_try_get_user_arg {
        create_options: *const c_void,
        num_options: usize,
        kv_get_callback: *const c_void,
        kv_get_user_arg: *mut c_void,
        kv_put_callback: *const c_void,
        kv_put_user_arg: *mut c_void,
        client: *mut PjrtClient,
        kv_try_get_callback: *const c_void,
        kv_try_get_user_arg: *mut c_void,
    }
);
args!(
    /// `PJRT_Client_Destroy_Args`.
    ClientDestroyArgs, last = client { client: *mut PjrtClient }
);
args!(
    /// `PJRT_Client_PlatformName_Args`.
    ClientPlatformNameArgs, last = platform_name_size {
        client: *mut PjrtClient,
        platform_name: *const c_char,
        platform_name_size: usize,
    }
);
args!(
    /// `PJRT_Client_Devices_Args`.
    ClientDevicesArgs, last = num_devices {
        client: *mut PjrtClient,
        devices: *const *mut PjrtDevice,
        num_devices: usize,
    }
);
args!(
    /// `PJRT_Client_AddressableDevices_Args`.
    ClientAddressableDevicesArgs, last = num_addressable_devices {
        client: *mut PjrtClient,
        addressable_devices: *const *mut PjrtDevice,
        num_addressable_devices: usize,
    }
);
args!(
    /// `PJRT_Program`.
    Program, last = format_size {
        code: *mut c_char,
        code_size: usize,
        format: *const c_char,
        format_size: usize,
    }
);
args!(
    /// `PJRT_Client_Compile_Args`.
    ClientCompileArgs, last = executable {
        client: *mut PjrtClient,
        program: *const Program,
        compile_options: *const c_char,
        compile_options_size: usize,
        executable: *mut PjrtLoadedExecutable,
    }
);
args!(
    /// `PJRT_Buffer_MemoryLayout_Tiled`.
    MemoryLayoutTiled, last = num_tiles {
        minor_to_major: *const i64,
        minor_to_major_size: usize,
        tile_dims: *const i64,
        tile_dim_sizes: *const usize,
        num_tiles: usize,
    }
);
args!(
    /// `PJRT_Buffer_MemoryLayout`. The header's anonymous union of `tiled` and `strides` is
    /// declared as its larger member, `tiled`, the only one used: the same size, alignment and
    /// offsets.
    MemoryLayout, last = layout_type { tiled: MemoryLayoutTiled, layout_type: i32 }
);
/// `PJRT_Buffer_MemoryLayout_Type_Tiled`.
pub(super) const MEMORY_LAYOUT_TILED: i32 = 0;
/// `PJRT_HostBufferSemantics_kImmutableOnlyDuringCall`: the plugin copies the host data before
/// `PJRT_Client_BufferFromHostBuffer` returns.
pub(super) const IMMUTABLE_ONLY_DURING_CALL: i32 = 0;
args!(
    /// `PJRT_Client_BufferFromHostBuffer_Args`.
    BufferFromHostBufferArgs, last = buffer {
        client: *mut PjrtClient,
        data: *const c_void,
        buffer_type: i32,
        dims: *const i64,
        num_dims: usize,
        byte_strides: *const i64,
        num_byte_strides: usize,
        host_buffer_semantics: i32,
        device: *mut PjrtDevice,
        memory: *mut c_void,
        device_layout: *mut MemoryLayout,
        done_with_host_buffer: *mut PjrtEvent,
        buffer: *mut PjrtBuffer,
    }
);
args!(
    /// `PJRT_DeviceDescription_Id_Args`.
    DeviceDescriptionIdArgs, last = id { device_description: *mut PjrtDeviceDescription, id: i32 }
);
args!(
    /// `PJRT_DeviceDescription_Kind_Args`.
    DeviceDescriptionKindArgs, last = device_kind_size {
        device_description: *mut PjrtDeviceDescription,
        device_kind: *const c_char,
        device_kind_size: usize,
    }
);
args!(
    /// `PJRT_Device_GetDescription_Args`.
    DeviceGetDescriptionArgs, last = device_description {
        device: *mut PjrtDevice,
        device_description: *mut PjrtDeviceDescription,
    }
);
args!(
    /// `PJRT_Executable_Destroy_Args`.
    ExecutableDestroyArgs, last = executable { executable: *mut PjrtExecutable }
);
args!(
    /// `PJRT_Executable_NumOutputs_Args`.
    ExecutableNumOutputsArgs, last = num_outputs { executable: *mut PjrtExecutable, num_outputs: usize }
);
args!(
    /// `PJRT_LoadedExecutable_Destroy_Args`.
    LoadedExecutableDestroyArgs, last = executable { executable: *mut PjrtLoadedExecutable }
);
args!(
    /// `PJRT_LoadedExecutable_GetExecutable_Args`.
    LoadedExecutableGetExecutableArgs, last = executable {
        loaded_executable: *mut PjrtLoadedExecutable,
        executable: *mut PjrtExecutable,
    }
);
args!(
    /// `PJRT_ExecuteOptions` (no send or receive callbacks, launch id 0, every input donatable,
    /// no context).
    ExecuteOptions, last = incarnation_ids {
        send_callbacks: *mut c_void,
        recv_callbacks: *mut c_void,
        num_send_ops: usize,
        num_recv_ops: usize,
        launch_id: i32,
        non_donatable_input_indices: *const i64,
        num_non_donatable_input_indices: usize,
        context: *mut c_void,
        call_location: *const c_char,
        num_tasks: usize,
        task_ids: *mut i32,
        incarnation_ids: *mut i64,
    }
);
args!(
    /// `PJRT_LoadedExecutable_Execute_Args`.
    LoadedExecutableExecuteArgs, last = execute_device {
        executable: *mut PjrtLoadedExecutable,
        options: *mut ExecuteOptions,
        argument_lists: *const *const *mut PjrtBuffer,
        num_devices: usize,
        num_args: usize,
        output_lists: *const *mut *mut PjrtBuffer,
        device_complete_events: *mut *mut PjrtEvent,
        execute_device: *mut PjrtDevice,
    }
);
args!(
    /// `PJRT_Buffer_Destroy_Args`.
    BufferDestroyArgs, last = buffer { buffer: *mut PjrtBuffer }
);
args!(
    /// `PJRT_Buffer_ElementType_Args`.
    BufferElementTypeArgs, last = buffer_type { buffer: *mut PjrtBuffer, buffer_type: i32 }
);
args!(
    /// `PJRT_Buffer_Dimensions_Args`.
    BufferDimensionsArgs, last = num_dims { buffer: *mut PjrtBuffer, dims: *const i64, num_dims: usize }
);
args!(
    /// `PJRT_Buffer_ToHostBuffer_Args`.
    BufferToHostBufferArgs, last = event {
        src: *mut PjrtBuffer,
        host_layout: *mut MemoryLayout,
        dst: *mut c_void,
        dst_size: usize,
        event: *mut PjrtEvent,
    }
);

/// `PJRT_Api_Version`.
#[repr(C)]
pub(super) struct ApiVersion {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) major_version: i32,
    pub(super) minor_version: i32,
}

/// An entry of the table returning `PJRT_Error*`.
type Entry<A> = Option<unsafe extern "C" fn(*mut A) -> *mut PjrtError>;
/// An entry of the table this client does not call.
type Unused = *const c_void;

/// `PJRT_Api`, up to `PJRT_Buffer_ToHostBuffer` (the header appends new entries at the end, so
/// these offsets hold for every minor version).
#[repr(C)]
pub(super) struct Api {
    pub(super) struct_size: usize,
    pub(super) extension_start: *mut c_void,
    pub(super) pjrt_api_version: ApiVersion,

    pub(super) error_destroy: Option<unsafe extern "C" fn(*mut ErrorDestroyArgs)>,
    pub(super) error_message: Option<unsafe extern "C" fn(*mut ErrorMessageArgs)>,
    pub(super) error_get_code: Entry<ErrorGetCodeArgs>,

    pub(super) plugin_initialize: Entry<PluginInitializeArgs>,
    _plugin_attributes: Unused,

    pub(super) event_destroy: Entry<EventDestroyArgs>,
    _event_is_ready: Unused,
    _event_error: Unused,
    pub(super) event_await: Entry<EventAwaitArgs>,
    _event_on_ready: Unused,

    pub(super) client_create: Entry<ClientCreateArgs>,
    pub(super) client_destroy: Entry<ClientDestroyArgs>,
    pub(super) client_platform_name: Entry<ClientPlatformNameArgs>,
    _client_process_index: Unused,
    _client_platform_version: Unused,
    pub(super) client_devices: Entry<ClientDevicesArgs>,
    pub(super) client_addressable_devices: Entry<ClientAddressableDevicesArgs>,
    _client_lookup_device: Unused,
    _client_lookup_addressable_device: Unused,
    _client_addressable_memories: Unused,
    pub(super) client_compile: Entry<ClientCompileArgs>,
    _client_default_device_assignment: Unused,
    pub(super) client_buffer_from_host_buffer: Entry<BufferFromHostBufferArgs>,

    pub(super) device_description_id: Entry<DeviceDescriptionIdArgs>,
    _device_description_process_index: Unused,
    _device_description_attributes: Unused,
    pub(super) device_description_kind: Entry<DeviceDescriptionKindArgs>,
    _device_description_debug_string: Unused,
    _device_description_to_string: Unused,

    pub(super) device_get_description: Entry<DeviceGetDescriptionArgs>,
    _device_is_addressable: Unused,
    _device_local_hardware_id: Unused,
    _device_addressable_memories: Unused,
    _device_default_memory: Unused,
    _device_memory_stats: Unused,

    _memory_id: Unused,
    _memory_kind: Unused,
    _memory_debug_string: Unused,
    _memory_to_string: Unused,
    _memory_addressable_by_devices: Unused,

    pub(super) executable_destroy: Entry<ExecutableDestroyArgs>,
    _executable_name: Unused,
    _executable_num_replicas: Unused,
    _executable_num_partitions: Unused,
    pub(super) executable_num_outputs: Entry<ExecutableNumOutputsArgs>,
    _executable_size_of_generated_code_in_bytes: Unused,
    _executable_get_cost_analysis: Unused,
    _executable_output_memory_kinds: Unused,
    _executable_optimized_program: Unused,
    _executable_serialize: Unused,

    pub(super) loaded_executable_destroy: Entry<LoadedExecutableDestroyArgs>,
    pub(super) loaded_executable_get_executable: Entry<LoadedExecutableGetExecutableArgs>,
    _loaded_executable_addressable_devices: Unused,
    _loaded_executable_delete: Unused,
    _loaded_executable_is_deleted: Unused,
    pub(super) loaded_executable_execute: Entry<LoadedExecutableExecuteArgs>,
    _executable_deserialize_and_load: Unused,
    _loaded_executable_fingerprint: Unused,

    pub(super) buffer_destroy: Entry<BufferDestroyArgs>,
    pub(super) buffer_element_type: Entry<BufferElementTypeArgs>,
    pub(super) buffer_dimensions: Entry<BufferDimensionsArgs>,
    _buffer_unpadded_dimensions: Unused,
    _buffer_dynamic_dimension_indices: Unused,
    _buffer_get_memory_layout: Unused,
    _buffer_on_device_size_in_bytes: Unused,
    _buffer_device: Unused,
    _buffer_memory: Unused,
    _buffer_delete: Unused,
    _buffer_is_deleted: Unused,
    _buffer_copy_to_device: Unused,
    pub(super) buffer_to_host_buffer: Entry<BufferToHostBufferArgs>,
}

// `PJRT_Buffer_ToHostBuffer` is the 71st entry, after the 40 bytes of the table's header.
const _: () = assert!(std::mem::offset_of!(Api, buffer_to_host_buffer) == 40 + 70 * 8);

impl Api {
    /// Whether a table of `struct_size` bytes holds every entry declared here.
    pub(super) fn covers_used_entries(struct_size: usize) -> bool {
        struct_size >= struct_size!(Api, buffer_to_host_buffer)
    }
}

/// The signature of a plugin's `GetPjrtApi`.
pub(super) type GetPjrtApi = unsafe extern "C" fn() -> *const Api;

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the header's `PJRT_DEFINE_STRUCT_TRAITS` gives on x86-64 and aarch64 Linux.
    #[test]
    fn struct_sizes_are_the_headers() {
        assert_eq!(ErrorMessageArgs::new().struct_size, 40);
        assert_eq!(PluginInitializeArgs::new().struct_size, 16);
        assert_eq!(ClientCreateArgs::new().struct_size, 88);
        assert_eq!(ClientCompileArgs::new().struct_size, 56);
        assert_eq!(MemoryLayoutTiled::new().struct_size, 56);
        assert_eq!(MemoryLayout::new().struct_size, 76);
        assert_eq!(BufferFromHostBufferArgs::new().struct_size, 120);
        assert_eq!(DeviceDescriptionIdArgs::new().struct_size, 28);
        assert_eq!(ExecuteOptions::new().struct_size, 112);
        assert_eq!(LoadedExecutableExecuteArgs::new().struct_size, 80);
        assert_eq!(BufferToHostBufferArgs::new().struct_size, 56);
        assert!(Api::covers_used_entries(40 + 71 * 8));
        assert!(!Api::covers_used_entries(40 + 70 * 8));
    }
}
