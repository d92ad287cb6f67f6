#include "agent/java/hotspot/java_stack.h"

#include "agent/java/hotspot/debug_info.h"

namespace nmprof::hotspot {
namespace {

constexpr uintptr_t kWord = sizeof(uintptr_t);
// Each step moves up the stack, so the stack's size bounds the walk; this bounds it
// further.
constexpr int kMaxPhysicalFrames = 1 << 16;

// The part of the thread's stack that holds the Java frames: above the caller's sp.
class Stack {
 public:
  explicit Stack(AddressRange range) : range_(range) {}

  bool contains(uintptr_t address, size_t size) const { return range_.contains(address, size); }
  bool word(uintptr_t address, uintptr_t* value) const {
    if (address % kWord != 0 || !range_.contains(address, kWord)) return false;
    *value = *reinterpret_cast<const uintptr_t*>(address);
    return true;
  }

 private:
  AddressRange range_;
};

struct Frame {
  uintptr_t sp = 0;
  uintptr_t unextended_sp = 0;  // where a compiled frame's size counts from
  uintptr_t fp = 0;
  uintptr_t pc = 0;
};

// The last Java frame a JavaFrameAnchor records; false if it records none or a bad one.
bool frame_of_anchor(const VmLayout& l, const Stack& stack, uintptr_t anchor, Frame* frame) {
  const void* a = reinterpret_cast<const void*>(anchor);
  uintptr_t sp = l.anchor_sp.address_in(a);
  if (sp == 0 || sp % kWord != 0 || !stack.contains(sp, kWord)) return false;
  frame->sp = frame->unextended_sp = sp;
  frame->fp = l.anchor_fp.address_in(a);
  // Without a pc the anchor's frame is that of the call at sp (frame(sp, fp)).
  frame->pc = l.anchor_pc.address_in(a);
  return frame->pc != 0 || stack.word(sp - kWord, &frame->pc);
}

// The sender of a frame whose CodeBlob has a fixed frame size (frame::sender_for_compiled_frame).
bool sender_by_size(const Stack& stack, const Frame& frame, int frame_words, Frame* sender) {
  if (frame_words <= 0) return false;
  uintptr_t sender_sp = frame.unextended_sp + static_cast<uintptr_t>(frame_words) * kWord;
  if (sender_sp <= frame.sp || !stack.word(sender_sp - kWord, &sender->pc) ||
      !stack.word(sender_sp - 2 * kWord, &sender->fp)) {
    return false;
  }
  sender->sp = sender->unextended_sp = sender_sp;
  return true;
}

// The virtual frames of a compiled frame at `pc`. The first Java frame of a walk is
// looked up the way AsyncGetCallTrace's is_decipherable_compiled_frame does, since
// its pc may be any pc of the method; the others are return addresses.
int compiled_virtual_frames(NmethodDebugInfo& info, uintptr_t pc, bool first, uintptr_t anchor_pc) {
  if (first) {
    if (pc == anchor_pc) {
      std::optional<int> scope = info.scope_at(pc, false);
      if (scope && *scope != 0) return info.virtual_frames(*scope);
    }
    std::optional<int> scope = info.scope_at(pc + 1, true);
    if (scope && *scope != 0) return info.virtual_frames(*scope);
  }
  // No PcDesc: vframeStream gives the method alone.
  std::optional<int> scope = info.scope_at(pc, false);
  return scope ? info.virtual_frames(*scope) : 1;
}

}  // namespace

// What frame::safe_for_sender says of a frame's caller at `pc`: vframeStreamForte
// ends its trace at a frame whose caller is not Java code or the call stub, or
// whose return address was redirected to its nmethod's deoptimization handler.
JavaStack::Caller JavaStack::caller_kind(uintptr_t pc, std::optional<CodeBlobView>& blob) const {
  if (code_.in_interpreter(pc) || code_.is_call_stub_return(pc)) return Caller::kJava;
  blob = code_.find_blob(pc);
  if (!blob) return Caller::kUnknown;
  if (blob->kind == BlobKind::kOther) return Caller::kEndsTrace;
  const void* header = reinterpret_cast<const void*>(blob->blob.begin);
  auto handler = [&](const AddressRef& ref) {
    uintptr_t value = ref.field.address_in(header);
    return ref.base == AddressRef::Base::kBlob ? blob->blob.begin + value : value;
  };
  if (pc == handler(layout_.deopt_handler) || pc == handler(layout_.deopt_mh_handler)) return Caller::kEndsTrace;
  return Caller::kJava;
}

WalkEnd JavaStack::walk(uintptr_t thread, uintptr_t sp, JavaFrameVisitor& visitor) const {
  const VmLayout& l = layout_;
  const void* t = reinterpret_cast<const void*>(thread);
  int64_t state = l.thread_state.value_in(t);
  if (state != l.state_in_native && state != l.state_in_vm && state != l.state_blocked) return WalkEnd::kFailed;
  uintptr_t stack_base = l.stack_base.address_in(t);
  uintptr_t stack_size = l.stack_size.address_in(t);
  if (stack_base <= sp || stack_base - sp > stack_size) return WalkEnd::kFailed;
  Stack stack({sp, stack_base});

  uintptr_t anchor = thread + l.thread_anchor;
  uintptr_t anchor_pc = l.anchor_pc.address_in(reinterpret_cast<const void*>(anchor));
  Frame frame;
  if (!frame_of_anchor(l, stack, anchor, &frame)) return WalkEnd::kFailed;

  bool first = true;
  std::optional<CodeBlobView> blob;  // of frame.pc, once looked up
  for (int step = 0; step < kMaxPhysicalFrames; step++) {
    Frame sender;
    bool entry = code_.is_call_stub_return(frame.pc);
    if (entry) {
      // An entry frame: the JavaCallWrapper in its C++ caller saved the anchor of
      // the Java frames that called out to that C++ code, if any.
      uintptr_t wrapper;
      if (!stack.word(frame.fp + l.entry_frame_call_wrapper_slot * static_cast<intptr_t>(kWord), &wrapper) ||
          !stack.contains(wrapper, l.call_wrapper_size)) {
        return WalkEnd::kFailed;
      }
      uintptr_t saved = wrapper + l.call_wrapper_anchor;
      if (l.anchor_sp.address_in(reinterpret_cast<const void*>(saved)) == 0) return WalkEnd::kEndOfStack;
      if (!frame_of_anchor(l, stack, saved, &sender)) return WalkEnd::kFailed;
    } else if (code_.in_interpreter(frame.pc)) {
      if (!visitor.visit({JavaFrameKind::kInterpreted, 1, false})) return WalkEnd::kStopped;
      first = false;
      // [fp] the caller's fp, [fp + 1] the return address, and the caller's sp
      // before this frame's arguments and locals extended it.
      if (frame.fp < frame.sp || !stack.word(frame.fp, &sender.fp) || !stack.word(frame.fp + kWord, &sender.pc) ||
          !stack.word(frame.fp + l.interpreter_sender_sp_slot * static_cast<intptr_t>(kWord),
                      &sender.unextended_sp) ||
          !stack.contains(sender.unextended_sp, kWord)) {
        return WalkEnd::kFailed;
      }
      sender.sp = frame.fp + 2 * kWord;
    } else {
      if (!blob) blob = code_.find_blob(frame.pc);
      if (!blob) return WalkEnd::kFailed;
      const void* header = reinterpret_cast<const void*>(blob->blob.begin);
      if (blob->kind == BlobKind::kNmethod) {
        NmethodDebugInfo info;
        if (!info.open(l, *blob)) return WalkEnd::kFailed;
        int virtual_frames = compiled_virtual_frames(info, frame.pc, first, anchor_pc);
        if (virtual_frames == 0) return WalkEnd::kFailed;
        int64_t level = l.comp_level ? l.comp_level->value_in(header) : 0;
        if (!visitor.visit({JavaFrameKind::kCompiled, virtual_frames, level >= 1 && level <= 3})) {
          return WalkEnd::kStopped;
        }
        first = false;
      } else if (blob->kind == BlobKind::kNativeWrapper) {
        if (!visitor.visit({JavaFrameKind::kNativeWrapper, 1, false})) return WalkEnd::kStopped;
        first = false;
      }
      if (!sender_by_size(stack, frame, blob->frame_words, &sender)) return WalkEnd::kFailed;
    }
    if (sender.sp <= frame.sp) return WalkEnd::kFailed;
    blob.reset();
    if (!entry) {
      switch (caller_kind(sender.pc, blob)) {
        case Caller::kJava: break;
        case Caller::kEndsTrace: return WalkEnd::kEndOfStack;
        case Caller::kUnknown: return WalkEnd::kFailed;
      }
    }
    frame = sender;
  }
  return WalkEnd::kFailed;
}

}  // namespace nmprof::hotspot
