//! A client of XLA's PJRT C API (`xla/pjrt/c/pjrt_c_api.h`): a plugin (XLA's CPU plugin,
//! `jax-cuda12-pjrt`'s CUDA one, `libtpu`, …) loaded at run time, computations compiled there
//! from their serialized `HloModuleProto` and run on [`Literal`]s. Behind the `pjrt` feature.
//!
//! ```no_run
//! use lazy_xla::*;
//! let b = XlaBuilder::new("double");
//! let x = b.parameter(0, &shape!(f32[3]), "x");
//! let computation = b.build(x + x)?;
//!
//! let client = pjrt::Client::load("pjrt_c_api_cpu_plugin.so")?;
//! println!("{} with {} devices", client.platform_name(), client.devices().len());
//! let executable = client.compile(&computation)?;
//! let out = executable.execute(&[&Literal::vec1(&[1.0f32, 2.0, 3.0])])?;
//! assert_eq!(out.to_vec::<f32>()?, vec![2.0, 4.0, 6.0]);
//! # Ok::<(), lazy_xla::Error>(())
//! ```
//!
//! Every call into the plugin is checked: an error it returns becomes an [`Error::Pjrt`] with
//! its message, and is freed. Arguments are copied to the device with their layout's byte
//! strides (a padded literal is first copied densely), and results are read back in row-major
//! order, then laid out as the computation's root says, as [`crate::Executable::execute`]
//! returns them. A plugin, once loaded, stays loaded for the life of the process, as jax keeps
//! its plugins: XLA's libraries do not support being unloaded.

mod compile_options;
mod ffi;

use std::ffi::{c_char, c_void};
use std::panic::Location;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Mutex;

use crate::builder::{call as record_call, tuple, XlaBuilder, XlaOp};
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::hlo::computation::XlaComputation;
use crate::literal::Literal;
use crate::shape::Shape;
use crate::storage::with_native_type;

use ffi::Api;

/// A loaded plugin's function table; plugins are never unloaded, so it lives for the process.
#[derive(Clone, Copy)]
struct Plugin {
    api: &'static Api,
}

/// The plugins loaded so far, by canonical path: each is opened and initialized once.
static LOADED: Mutex<Vec<(PathBuf, usize)>> = Mutex::new(Vec::new());

/// A device of a PJRT client: its id and the plugin's name for its kind (`"cpu"`,
/// `"NVIDIA H100 80GB HBM3"`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    id: i32,
    kind: String,
}

impl Device {
    /// The device's id, unique among the client's devices.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The plugin's name for the kind of device.
    pub fn kind(&self) -> &str {
        &self.kind
    }
}

/// A PJRT client over one plugin: compiles computations for the plugin's first addressable
/// device. Dropping it destroys the plugin's client once the last [`Executable`] compiled by
/// it is dropped too. A client and its executables are neither `Send` nor `Sync`: they are
/// used on the thread that loaded the client (several clients of one plugin may coexist).
pub struct Client {
    inner: Rc<ClientInner>,
}

/// The plugin's client and what was read from it once.
struct ClientInner {
    plugin: Plugin,
    client: *mut ffi::PjrtClient,
    platform_name: String,
    devices: Vec<Device>,
    /// The first addressable device: where arguments go and computations run.
    device: *mut ffi::PjrtDevice,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let mut args = ffi::ClientDestroyArgs::new();
        args.client = self.client;
        // SAFETY: `client` was created by this plugin's `PJRT_Client_Create` and is destroyed
        // once, here; the executables that use it hold this `ClientInner` alive.
        let error = unsafe { call(self.plugin.api.client_destroy, &mut args) };
        free_error(self.plugin, error);
    }
}

impl Client {
    /// Loads the PJRT plugin at `plugin_path` (a shared library exporting `GetPjrtApi`),
    /// checks its API version, initializes it (once per process) and creates a client with
    /// default options.
    ///
    /// Loading runs the library's initialization code: `plugin_path` must name a PJRT plugin
    /// (or a library that is safe to load). A path that does not open, a library without
    /// `GetPjrtApi`, a plugin of another major API version or one whose table lacks an entry
    /// this client calls, and any error of the plugin are an [`Error::Pjrt`].
    ///
    /// ```
    /// let error = lazy_xla::pjrt::Client::load("/no/such/plugin.so").err().unwrap();
    /// assert!(error.to_string().contains("/no/such/plugin.so"));
    /// ```
    #[track_caller]
    pub fn load(plugin_path: impl AsRef<Path>) -> Result<Client> {
        let location = Location::caller();
        let plugin = open(plugin_path.as_ref(), location)?;
        let mut create = ffi::ClientCreateArgs::new();
        // SAFETY: `create` is a zeroed `PJRT_Client_Create_Args` with its struct size (no
        // options, no key-value callbacks), alive for the call.
        let error = unsafe { call(plugin.api.client_create, &mut create) };
        check(plugin, error, "PJRT_Client_Create", location)?;
        // From here the client is destroyed by `ClientInner`'s drop, whatever fails next.
        let mut inner = ClientInner {
            plugin,
            client: create.client,
            platform_name: String::new(),
            devices: Vec::new(),
            device: std::ptr::null_mut(),
        };

        let mut name = ffi::ClientPlatformNameArgs::new();
        name.client = inner.client;
        // SAFETY: a live client; the name it returns is owned by the client and copied at once.
        let error = unsafe { call(plugin.api.client_platform_name, &mut name) };
        check(plugin, error, "PJRT_Client_PlatformName", location)?;
        // SAFETY: the plugin set `platform_name` to `platform_name_size` bytes owned by the
        // client, which is alive.
        inner.platform_name = unsafe { text(name.platform_name, name.platform_name_size) };

        let mut devices = ffi::ClientDevicesArgs::new();
        devices.client = inner.client;
        // SAFETY: a live client; the array it returns is owned by the client.
        let error = unsafe { call(plugin.api.client_devices, &mut devices) };
        check(plugin, error, "PJRT_Client_Devices", location)?;
        // SAFETY: the plugin set `devices` to `num_devices` device pointers owned by the client.
        let all = unsafe { pointers(devices.devices, devices.num_devices) };
        for device in all {
            inner.devices.push(describe(plugin, device, location)?);
        }

        let mut addressable = ffi::ClientAddressableDevicesArgs::new();
        addressable.client = inner.client;
        // SAFETY: a live client; the array it returns is owned by the client.
        let error = unsafe { call(plugin.api.client_addressable_devices, &mut addressable) };
        check(plugin, error, "PJRT_Client_AddressableDevices", location)?;
        // SAFETY: `num_addressable_devices` device pointers owned by the client.
        let addressable =
            unsafe { pointers(addressable.addressable_devices, addressable.num_addressable_devices) };
        inner.device = match addressable.first() {
            Some(&device) => device,
            None => return Err(own_error("the plugin's client has no addressable device", location)),
        };
        Ok(Client { inner: Rc::new(inner) })
    }

    /// The plugin's platform name (`"cpu"`, `"cuda"`, `"tpu"`, …).
    pub fn platform_name(&self) -> &str {
        &self.inner.platform_name
    }

    /// Every device the client sees.
    pub fn devices(&self) -> Vec<Device> {
        self.inner.devices.clone()
    }

    /// Compiles `computation` (its serialized `HloModuleProto`, format `"hlo"`) for one replica
    /// and one partition. A module the plugin rejects is an [`Error::Pjrt`] with the plugin's
    /// message. PJRT's buffers are arrays, so a computation with tuple parameters is compiled
    /// inside one whose parameters are their leaves, which it reassembles and calls it with.
    #[track_caller]
    pub fn compile(&self, computation: &XlaComputation) -> Result<Executable> {
        let location = Location::caller();
        let plugin = self.inner.plugin;
        let module = match with_leaf_parameters(computation)? {
            Some(flat) => flat.to_hlo_proto(),
            None => computation.to_hlo_proto(),
        };
        let options = compile_options::single_device();
        let mut program = ffi::Program::new();
        // The plugin only reads `code` while compiling.
        program.code = module.as_ptr().cast::<c_char>().cast_mut();
        program.code_size = module.len();
        program.format = c"hlo".as_ptr();
        program.format_size = 3;
        let mut compile = ffi::ClientCompileArgs::new();
        compile.client = self.inner.client;
        compile.program = &program;
        compile.compile_options = options.as_ptr().cast::<c_char>();
        compile.compile_options_size = options.len();
        // SAFETY: a live client; `program`, `module` and `options` outlive the call.
        let error = unsafe { call(plugin.api.client_compile, &mut compile) };
        check(plugin, error, "PJRT_Client_Compile", location)?;
        let signature = computation.program_shape();
        let executable = Executable {
            client: Rc::clone(&self.inner),
            loaded: compile.executable,
            parameters: signature.parameters,
            result: signature.result,
        };
        let outputs = executable.num_outputs(location)?;
        let leaves = leaf_shapes(&executable.result).len();
        if outputs != leaves {
            return Err(own_error(
                &format!(
                    "the plugin's executable has {outputs} outputs but the computation returns {leaves} arrays ({})",
                    executable.result
                ),
                location,
            ));
        }
        Ok(executable)
    }
}

/// A computation compiled by a PJRT plugin, run on its client's first addressable device.
pub struct Executable {
    client: Rc<ClientInner>,
    loaded: *mut ffi::PjrtLoadedExecutable,
    parameters: Vec<(String, Shape)>,
    result: Shape,
}

impl Drop for Executable {
    fn drop(&mut self) {
        let plugin = self.client.plugin;
        let mut args = ffi::LoadedExecutableDestroyArgs::new();
        args.executable = self.loaded;
        // SAFETY: `loaded` came from `PJRT_Client_Compile` of the client this executable holds
        // alive, and is destroyed once, here.
        let error = unsafe { call(plugin.api.loaded_executable_destroy, &mut args) };
        free_error(plugin, error);
    }
}

impl Executable {
    /// Runs the executable on `arguments` (one per parameter, each of the parameter's element
    /// type and dimensions, in any layout; a tuple parameter takes a tuple literal, its leaves
    /// copied to the device one by one) and returns the result in the root's shape and
    /// layout; a tuple root gives a tuple literal. A wrong argument count or shape is an
    /// [`Error::InvalidArgument`], as in [`crate::Executable::execute`]; an error of the
    /// plugin an [`Error::Pjrt`].
    #[track_caller]
    pub fn execute(&self, arguments: &[&Literal]) -> Result<Literal> {
        let location = Location::caller();
        self.check_arguments(arguments)?;
        let plugin = self.client.plugin;
        let mut leaves = Vec::with_capacity(arguments.len());
        for argument in arguments {
            leaf_literals(argument, &mut leaves)?;
        }
        let mut inputs = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            inputs.push(self.to_device(leaf, location)?);
        }
        let input_pointers: Vec<*mut ffi::PjrtBuffer> = inputs.iter().map(|b| b.buffer).collect();
        let leaves = leaf_shapes(&self.result);
        let mut output_pointers: Vec<*mut ffi::PjrtBuffer> = vec![std::ptr::null_mut(); leaves.len()];
        let argument_lists = [input_pointers.as_ptr()];
        let output_lists = [output_pointers.as_mut_ptr()];
        let mut complete: *mut ffi::PjrtEvent = std::ptr::null_mut();
        let mut options = ffi::ExecuteOptions::new();
        let mut execute = ffi::LoadedExecutableExecuteArgs::new();
        execute.executable = self.loaded;
        execute.options = &mut options;
        execute.argument_lists = argument_lists.as_ptr();
        execute.num_devices = 1;
        execute.num_args = input_pointers.len();
        execute.output_lists = output_lists.as_ptr();
        execute.device_complete_events = &mut complete;
        // SAFETY: a live executable; the argument list holds `num_args` live buffers of this
        // client, the output list room for the executable's outputs (checked at compile time),
        // and both lists, the options and the event slot outlive the call.
        let error = unsafe { call(plugin.api.loaded_executable_execute, &mut execute) };
        // The outputs are owned from here, whether or not the run succeeds.
        let outputs: Vec<DeviceBuffer> =
            output_pointers.iter().map(|&buffer| DeviceBuffer { plugin, buffer }).collect();
        check(plugin, error, "PJRT_LoadedExecutable_Execute", location)?;
        await_event(plugin, complete, "PJRT_LoadedExecutable_Execute", location)?;
        drop(inputs);
        let mut values = Vec::with_capacity(leaves.len());
        for (output, shape) in outputs.iter().zip(&leaves) {
            values.push(output.to_host(shape, location)?);
        }
        let mut values = values.into_iter();
        assemble(&self.result, &mut values)
    }

    /// The number of outputs the plugin's executable returns per device.
    fn num_outputs(&self, location: &'static Location<'static>) -> Result<usize> {
        let plugin = self.client.plugin;
        let mut get = ffi::LoadedExecutableGetExecutableArgs::new();
        get.loaded_executable = self.loaded;
        // SAFETY: a live loaded executable; the executable returned is destroyed below.
        let error = unsafe { call(plugin.api.loaded_executable_get_executable, &mut get) };
        check(plugin, error, "PJRT_LoadedExecutable_GetExecutable", location)?;
        let mut count = ffi::ExecutableNumOutputsArgs::new();
        count.executable = get.executable;
        // SAFETY: the executable just returned, alive until destroyed below.
        let error = unsafe { call(plugin.api.executable_num_outputs, &mut count) };
        let mut destroy = ffi::ExecutableDestroyArgs::new();
        destroy.executable = get.executable;
        // SAFETY: the executable `PJRT_LoadedExecutable_GetExecutable` returned, destroyed once.
        let destroyed = unsafe { call(plugin.api.executable_destroy, &mut destroy) };
        check(plugin, error, "PJRT_Executable_NumOutputs", location)?;
        check(plugin, destroyed, "PJRT_Executable_Destroy", location)?;
        Ok(count.num_outputs)
    }

    /// Arguments must match the parameters in count, element type and dimensions (tuples
    /// element by element).
    fn check_arguments(&self, arguments: &[&Literal]) -> Result<()> {
        if arguments.len() != self.parameters.len() {
            return Err(Error::invalid(format!(
                "the computation takes {} arguments but {} were given",
                self.parameters.len(),
                arguments.len()
            )));
        }
        for (number, ((name, shape), argument)) in self.parameters.iter().zip(arguments).enumerate() {
            if !matches_parameter(argument.shape(), shape) {
                return Err(Error::invalid(format!(
                    "argument {number} ({name}) has shape {} but parameter {number} expects {shape}",
                    argument.shape()
                )));
            }
        }
        Ok(())
    }

    /// `literal` copied to the client's device, read through its layout's byte strides.
    fn to_device(&self, literal: &Literal, location: &'static Location<'static>) -> Result<DeviceBuffer> {
        let plugin = self.client.plugin;
        let dense;
        let literal = if literal.shape().is_padded() {
            dense = literal.relayout(&literal.shape().layout().without_padding())?;
            &dense
        } else {
            literal
        };
        let shape = literal.shape();
        let element_type = shape.element_type();
        let dimensions = shape.dimensions();
        let mut strides = vec![0i64; dimensions.len()];
        let mut stride = element_type.byte_size() as i64;
        for &dimension in shape.layout().minor_to_major() {
            strides[dimension as usize] = stride;
            stride *= dimensions[dimension as usize];
        }
        let data: *const c_void =
            with_native_type!(element_type, T => literal.memory::<T>()?.as_ptr().cast());
        let mut args = ffi::BufferFromHostBufferArgs::new();
        args.client = self.client.client;
        args.data = data;
        args.buffer_type = buffer_type(element_type);
        args.dims = dimensions.as_ptr();
        args.num_dims = dimensions.len();
        args.byte_strides = strides.as_ptr();
        args.num_byte_strides = strides.len();
        args.host_buffer_semantics = ffi::IMMUTABLE_ONLY_DURING_CALL;
        args.device = self.client.device;
        // SAFETY: a live client and device; `data` holds the literal's elements, dense in the
        // layout `strides` describes (padding was removed above), and it, `dimensions` and
        // `strides` outlive the call, after which the plugin holds no reference to them
        // (`kImmutableOnlyDuringCall`).
        let error = unsafe { call(plugin.api.client_buffer_from_host_buffer, &mut args) };
        let buffer = DeviceBuffer { plugin, buffer: args.buffer };
        check(plugin, error, "PJRT_Client_BufferFromHostBuffer", location)?;
        await_event(plugin, args.done_with_host_buffer, "PJRT_Client_BufferFromHostBuffer", location)?;
        Ok(buffer)
    }
}

/// A buffer on the device, destroyed when dropped (a null one is nothing).
struct DeviceBuffer {
    plugin: Plugin,
    buffer: *mut ffi::PjrtBuffer,
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.buffer.is_null() {
            return;
        }
        let mut args = ffi::BufferDestroyArgs::new();
        args.buffer = self.buffer;
        // SAFETY: `buffer` was returned by this plugin and is destroyed once, here.
        let error = unsafe { call(self.plugin.api.buffer_destroy, &mut args) };
        free_error(self.plugin, error);
    }
}

impl DeviceBuffer {
    /// The buffer's values as a literal of `shape` (an array shape, in its layout), after
    /// checking the buffer's element type and dimensions against it.
    fn to_host(&self, shape: &Shape, location: &'static Location<'static>) -> Result<Literal> {
        let plugin = self.plugin;
        if self.buffer.is_null() {
            return Err(own_error("the plugin returned no buffer for an output", location));
        }
        let mut element_type = ffi::BufferElementTypeArgs::new();
        element_type.buffer = self.buffer;
        // SAFETY: a live buffer of this plugin.
        let error = unsafe { call(plugin.api.buffer_element_type, &mut element_type) };
        check(plugin, error, "PJRT_Buffer_ElementType", location)?;
        let mut dimensions = ffi::BufferDimensionsArgs::new();
        dimensions.buffer = self.buffer;
        // SAFETY: a live buffer of this plugin; the dimensions it returns are owned by it.
        let error = unsafe { call(plugin.api.buffer_dimensions, &mut dimensions) };
        check(plugin, error, "PJRT_Buffer_Dimensions", location)?;
        // SAFETY: `num_dims` dimensions owned by the live buffer, copied at once.
        let dims = unsafe { pointers(dimensions.dims, dimensions.num_dims) };
        if element_type.buffer_type != buffer_type(shape.element_type()) || dims != shape.dimensions() {
            return Err(own_error(
                &format!(
                    "the plugin returned an output of PJRT type {} and dimensions {dims:?} for {shape}",
                    element_type.buffer_type
                ),
                location,
            ));
        }

        let row_major = shape.with_default_layout();
        let mut literal = Literal::for_overwrite(&row_major)?;
        let storage = literal.storage_mut()?;
        let (dst, bytes): (*mut c_void, usize) = with_native_type!(shape.element_type(), T => {
            let memory = storage.as_mut_slice::<T>()?;
            (memory.as_mut_ptr().cast(), std::mem::size_of_val(memory))
        });
        let minor_to_major: Vec<i64> = (0..dims.len() as i64).rev().collect();
        let mut layout = ffi::MemoryLayout::new();
        layout.layout_type = ffi::MEMORY_LAYOUT_TILED;
        layout.tiled = ffi::MemoryLayoutTiled::new();
        layout.tiled.minor_to_major = minor_to_major.as_ptr();
        layout.tiled.minor_to_major_size = minor_to_major.len();

        let mut size = ffi::BufferToHostBufferArgs::new();
        size.src = self.buffer;
        size.host_layout = &mut layout;
        // SAFETY: a live buffer; with a null `dst` the plugin only sets `dst_size`.
        let error = unsafe { call(plugin.api.buffer_to_host_buffer, &mut size) };
        check(plugin, error, "PJRT_Buffer_ToHostBuffer", location)?;
        // SAFETY: an event the plugin may have returned with the size query; null is no event.
        free_event(plugin, size.event);
        if size.dst_size != bytes {
            return Err(own_error(
                &format!("the plugin's output holds {} bytes but {shape} is {bytes} bytes", size.dst_size),
                location,
            ));
        }
        let mut copy = ffi::BufferToHostBufferArgs::new();
        copy.src = self.buffer;
        copy.host_layout = &mut layout;
        copy.dst = dst;
        copy.dst_size = bytes;
        // SAFETY: a live buffer; `dst` is the literal's dense row-major buffer of `bytes` bytes
        // (the size the plugin asked for) of the buffer's element type (checked above; XLA's
        // `pred` elements are the bytes 0 and 1, valid `bool`s), written until the event
        // completes, which is awaited below before the literal is touched; `layout` and
        // `minor_to_major` outlive the wait.
        let error = unsafe { call(plugin.api.buffer_to_host_buffer, &mut copy) };
        check(plugin, error, "PJRT_Buffer_ToHostBuffer", location)?;
        await_event(plugin, copy.event, "PJRT_Buffer_ToHostBuffer", location)?;
        if shape.layout().is_default() {
            Ok(literal)
        } else {
            literal.relayout(shape.layout())
        }
    }
}

/// Opens (once per process) the plugin at `path`, checks its version and initializes it.
fn open(path: &Path, location: &'static Location<'static>) -> Result<Plugin> {
    let canonical = path
        .canonicalize()
        .map_err(|e| own_error(&format!("cannot open the PJRT plugin {}: {e}", path.display()), location))?;
    let mut loaded = LOADED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&(_, api)) = loaded.iter().find(|(p, _)| *p == canonical) {
        // SAFETY: the address of a checked, initialized table of a plugin that is never unloaded.
        return Ok(Plugin { api: unsafe { &*(api as *const Api) } });
    }
    // SAFETY: loading runs the library's initializers; `Client::load`'s contract is that the
    // path names a PJRT plugin or a library safe to load.
    let library = unsafe { libloading::Library::new(&canonical) }
        .map_err(|e| own_error(&format!("cannot open the PJRT plugin {}: {e}", path.display()), location))?;
    // SAFETY: `GetPjrtApi` is declared by the header with this signature; a library exporting
    // the name is taken to be a PJRT plugin.
    let get_api = unsafe { library.get::<ffi::GetPjrtApi>(b"GetPjrtApi\0") }.map_err(|e| {
        own_error(&format!("{} is not a PJRT plugin (no GetPjrtApi): {e}", path.display()), location)
    })?;
    // SAFETY: `GetPjrtApi` takes nothing and returns the plugin's static table, or null.
    let api = unsafe { get_api() };
    // SAFETY: a non-null pointer from `GetPjrtApi` points at the plugin's `PJRT_Api`, which
    // lives as long as the library, which is never unloaded (leaked below). Only its header is
    // read before its size is checked.
    let api: &'static Api = match unsafe { api.as_ref() } {
        Some(api) => api,
        None => {
            return Err(own_error(&format!("{}: GetPjrtApi returned no table", path.display()), location))
        }
    };
    let version = &api.pjrt_api_version;
    if version.major_version != ffi::API_MAJOR {
        return Err(own_error(
            &format!(
                "{} implements PJRT C API {}.{}, but lazy-xla speaks major version {}",
                path.display(),
                version.major_version,
                version.minor_version,
                ffi::API_MAJOR
            ),
            location,
        ));
    }
    if !Api::covers_used_entries(api.struct_size) {
        return Err(own_error(
            &format!(
                "{} implements PJRT C API {}.{}, whose table ({} bytes) lacks entries lazy-xla calls",
                path.display(),
                version.major_version,
                version.minor_version,
                api.struct_size
            ),
            location,
        ));
    }
    let plugin = Plugin { api };
    let mut initialize = ffi::PluginInitializeArgs::new();
    // SAFETY: the table was checked to hold the entry; called once per plugin, before any other.
    let error = unsafe { call(api.plugin_initialize, &mut initialize) };
    check(plugin, error, "PJRT_Plugin_Initialize", location)?;
    std::mem::forget(library);
    loaded.push((canonical, api as *const Api as usize));
    Ok(plugin)
}

/// The id and kind of `device`.
fn describe(
    plugin: Plugin,
    device: *mut ffi::PjrtDevice,
    location: &'static Location<'static>,
) -> Result<Device> {
    let mut description = ffi::DeviceGetDescriptionArgs::new();
    description.device = device;
    // SAFETY: a device of a live client; the description is owned by the device.
    let error = unsafe { call(plugin.api.device_get_description, &mut description) };
    check(plugin, error, "PJRT_Device_GetDescription", location)?;
    let mut id = ffi::DeviceDescriptionIdArgs::new();
    id.device_description = description.device_description;
    // SAFETY: the description just returned, owned by the live device.
    let error = unsafe { call(plugin.api.device_description_id, &mut id) };
    check(plugin, error, "PJRT_DeviceDescription_Id", location)?;
    let mut kind = ffi::DeviceDescriptionKindArgs::new();
    kind.device_description = description.device_description;
    // SAFETY: as above; the kind string is owned by the device.
    let error = unsafe { call(plugin.api.device_description_kind, &mut kind) };
    check(plugin, error, "PJRT_DeviceDescription_Kind", location)?;
    // SAFETY: `device_kind_size` bytes owned by the live device, copied at once.
    let kind = unsafe { text(kind.device_kind, kind.device_kind_size) };
    Ok(Device { id: id.id, kind })
}

/// Calls a table entry with `args`; a missing entry (a null pointer in the plugin's table) is
/// reported as a null function, never called.
///
/// # Safety
/// `args` must be the entry's argument struct, filled as the header requires of the call.
unsafe fn call<A>(
    entry: Option<unsafe extern "C" fn(*mut A) -> *mut ffi::PjrtError>,
    args: &mut A,
) -> *mut ffi::PjrtError {
    match entry {
        // SAFETY: the caller's promise about `args`; the entry is the plugin's implementation.
        Some(function) => unsafe { function(args) },
        None => std::ptr::null_mut(),
    }
}

/// `Ok` for a null error; otherwise the error's message and code as an [`Error::Pjrt`], the
/// error freed.
fn check(
    plugin: Plugin,
    error: *mut ffi::PjrtError,
    call_name: &str,
    location: &'static Location<'static>,
) -> Result<()> {
    if error.is_null() {
        return Ok(());
    }
    let mut message = ffi::ErrorMessageArgs::new();
    message.error = error;
    let text = match plugin.api.error_message {
        Some(function) => {
            // SAFETY: a live error of this plugin; the message it returns lives as long as it.
            unsafe { function(&mut message) };
            // SAFETY: `message_size` bytes owned by the error, copied before it is freed.
            unsafe { text(message.message, message.message_size) }
        }
        None => String::from("(the plugin gives no error messages)"),
    };
    let mut code = ffi::ErrorGetCodeArgs::new();
    code.error = error;
    // SAFETY: a live error of this plugin.
    let code_error = unsafe { call(plugin.api.error_get_code, &mut code) };
    let code = if code_error.is_null() { Some(code_name(code.code)) } else { None };
    free_error(plugin, code_error);
    free_error(plugin, error);
    Err(Error::Pjrt { message: text, code, call: call_name.to_string(), location })
}

/// Frees `error` (null is nothing).
fn free_error(plugin: Plugin, error: *mut ffi::PjrtError) {
    if error.is_null() {
        return;
    }
    if let Some(function) = plugin.api.error_destroy {
        let mut args = ffi::ErrorDestroyArgs::new();
        args.error = error;
        // SAFETY: a live error of this plugin, freed once, here.
        unsafe { function(&mut args) };
    }
}

/// Waits for `event` (null is nothing), then destroys it; its error is an [`Error::Pjrt`].
fn await_event(
    plugin: Plugin,
    event: *mut ffi::PjrtEvent,
    call_name: &str,
    location: &'static Location<'static>,
) -> Result<()> {
    if event.is_null() {
        return Ok(());
    }
    let mut args = ffi::EventAwaitArgs::new();
    args.event = event;
    // SAFETY: a live event of this plugin, destroyed below.
    let error = unsafe { call(plugin.api.event_await, &mut args) };
    free_event(plugin, event);
    check(plugin, error, call_name, location)
}

/// Destroys `event` (null is nothing).
fn free_event(plugin: Plugin, event: *mut ffi::PjrtEvent) {
    if event.is_null() {
        return;
    }
    let mut args = ffi::EventDestroyArgs::new();
    args.event = event;
    // SAFETY: a live event of this plugin, destroyed once, here.
    let error = unsafe { call(plugin.api.event_destroy, &mut args) };
    free_error(plugin, error);
}

/// An [`Error::Pjrt`] that lazy-xla raises itself (no plugin code).
fn own_error(message: &str, location: &'static Location<'static>) -> Error {
    Error::Pjrt { message: message.to_string(), code: None, call: String::from("lazy-xla"), location }
}

/// `size` bytes at `data` as text (invalid UTF-8 replaced).
///
/// # Safety
/// `data` must point at `size` readable bytes, or `size` must be 0.
unsafe fn text(data: *const c_char, size: usize) -> String {
    if data.is_null() || size == 0 {
        return String::new();
    }
    // SAFETY: the caller's promise.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// `count` values at `data`, copied.
///
/// # Safety
/// `data` must point at `count` readable values, or `count` must be 0.
unsafe fn pointers<T: Copy>(data: *const T, count: usize) -> Vec<T> {
    if data.is_null() || count == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's promise.
    unsafe { std::slice::from_raw_parts(data, count) }.to_vec()
}

/// `PJRT_Buffer_Type` of an element type.
fn buffer_type(element_type: ElementType) -> i32 {
    match element_type {
        ElementType::Pred => 1,
        ElementType::S8 => 2,
        ElementType::S16 => 3,
        ElementType::S32 => 4,
        ElementType::S64 => 5,
        ElementType::U8 => 6,
        ElementType::U16 => 7,
        ElementType::U32 => 8,
        ElementType::U64 => 9,
        ElementType::F16 => 10,
        ElementType::F32 => 11,
        ElementType::F64 => 12,
        ElementType::Bf16 => 13,
    }
}

/// abseil's name of a `PJRT_Error_Code`.
fn code_name(code: i32) -> String {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("code {code}"), |n| n.to_string())
}

/// `computation` inside a computation whose parameters are the leaves of its parameters
/// (depth first, in parameter order), which reassembles each tuple parameter and calls it with
/// them; `None` where no parameter is a tuple.
fn with_leaf_parameters(computation: &XlaComputation) -> Result<Option<XlaComputation>> {
    let signature = computation.program_shape();
    if !signature.parameters.iter().any(|(_, shape)| shape.is_tuple()) {
        return Ok(None);
    }
    /// The parameters of `shape`'s leaves from number `next` on, reassembled as `shape`.
    fn leaves<'b>(builder: &'b XlaBuilder, shape: &Shape, name: &str, next: &mut i64) -> XlaOp<'b> {
        if shape.is_tuple() {
            let elements: Vec<XlaOp<'b>> = (shape.tuple_shapes().iter().enumerate())
                .map(|(i, element)| leaves(builder, element, &format!("{name}.{i}"), next))
                .collect();
            return tuple(builder, &elements);
        }
        *next += 1;
        builder.parameter(*next - 1, shape, name)
    }
    let builder = XlaBuilder::new(&format!("{}.leaves", computation.name()));
    let mut next = 0;
    let operands: Vec<XlaOp<'_>> =
        signature.parameters.iter().map(|(name, shape)| leaves(&builder, shape, name, &mut next)).collect();
    builder.build(record_call(&builder, computation, &operands)).map(Some)
}

/// Whether an argument of shape `argument` fits a parameter of shape `parameter`: the same
/// element type and dimensions (any layout), tuples element by element.
fn matches_parameter(argument: &Shape, parameter: &Shape) -> bool {
    match (argument.is_tuple(), parameter.is_tuple()) {
        (true, true) => {
            let (a, p) = (argument.tuple_shapes(), parameter.tuple_shapes());
            a.len() == p.len() && a.iter().zip(p).all(|(a, p)| matches_parameter(a, p))
        }
        (false, false) => argument.same_dimensions_and_type(parameter),
        _ => false,
    }
}

/// The arrays of `literal`, depth first, pushed onto `leaves`.
fn leaf_literals<'l>(literal: &'l Literal, leaves: &mut Vec<&'l Literal>) -> Result<()> {
    if !literal.is_tuple() {
        leaves.push(literal);
        return Ok(());
    }
    for i in 0..literal.shape().tuple_shapes().len() {
        leaf_literals(literal.tuple_element(i)?, leaves)?;
    }
    Ok(())
}

/// The array shapes of a result, depth first (PJRT's outputs of a tuple root, in order).
fn leaf_shapes(shape: &Shape) -> Vec<Shape> {
    if shape.is_tuple() {
        shape.tuple_shapes().iter().flat_map(leaf_shapes).collect()
    } else {
        vec![shape.clone()]
    }
}

/// The literal of `shape` made of the leaves `values` gives, depth first.
fn assemble(shape: &Shape, values: &mut impl Iterator<Item = Literal>) -> Result<Literal> {
    if shape.is_tuple() {
        let elements =
            shape.tuple_shapes().iter().map(|s| assemble(s, values)).collect::<Result<Vec<_>>>()?;
        return Ok(Literal::tuple(elements));
    }
    values.next().ok_or_else(|| Error::invalid(format!("pjrt: no output left for {shape}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_abseils_names() {
        assert_eq!(code_name(3), "INVALID_ARGUMENT");
        assert_eq!(code_name(16), "UNAUTHENTICATED");
        assert_eq!(code_name(99), "code 99");
    }

    #[test]
    fn leaves_are_depth_first_and_reassemble() {
        let shape = Shape::tuple(&[
            crate::shape!(f32[2]),
            Shape::tuple(&[crate::shape!(s32[]), crate::shape!(f32[1])]),
        ]);
        let leaves = leaf_shapes(&shape);
        assert_eq!(leaves, vec![crate::shape!(f32[2]), crate::shape!(s32[]), crate::shape!(f32[1])]);
        let values = vec![Literal::vec1(&[1.0f32, 2.0]), Literal::scalar(3i32), Literal::vec1(&[4.0f32])];
        let literal = assemble(&shape, &mut values.clone().into_iter()).unwrap();
        assert_eq!(literal.shape(), &shape);
        assert_eq!(literal.decompose_tuple().unwrap()[0], values[0]);
    }
}
