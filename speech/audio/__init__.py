"""Audio for lector: formats and Accept negotiation, encoders, resampling, fades, loudness.

Engines hand over float32 mono chunks and know no formats; everything after that lives here.
``loudness_normalize`` is ``loudness.normalize`` under a name that cannot be mistaken for text
normalisation at this level.
"""

from speech.audio.encoders import StreamEncoder, encode_whole, open_encoder
from speech.audio.encoders_pyav import CHAPTER_FORMATS, MP3_PRIMING_SAMPLES
from speech.audio.fade import fade_edges
from speech.audio.files import (
    FILE_FORMATS,
    SEGMENTED,
    EncodedSegment,
    FileEncoder,
    SegmentEncoder,
    SegmentJoiner,
    frame_size,
    join_skip,
    open_file_encoder,
)
from speech.audio.formats import (
    DEPRECATED_ALIASES,
    JSON_VARIANT_FORMATS,
    JSON_WEBSOCKET_FORMATS,
    MP3_RATES,
    OPUS_RATES,
    RAW_WEBSOCKET_FORMATS,
    STREAMING_FORMATS,
    AudioFormat,
    NegotiationResult,
    Representation,
    encode_rate,
    from_audio_format_param,
    from_name,
    mp3_encode_rate,
    negotiate,
    not_acceptable_message,
    opus_encode_rate,
    supported_accept_list,
)
from speech.audio.levels import FileLevels, decoded_blocks, measure_file
from speech.audio.loudness import (
    LoudnessMeter,
    MeterState,
    apply_gain_db,
    gated_loudness,
    integrated_loudness,
    joined_loudness,
    limit_true_peak,
    normalization_gain_db,
    normalize,
    segments_loudness,
    true_peak_level,
)
from speech.audio.loudness import normalize as loudness_normalize
from speech.audio.metadata import Chapter, Metadata
from speech.audio.pcm import float_to_int16, lin2ulaw, patch_wav_sizes, ulaw2lin, wav_header
from speech.audio.resample import StreamResampler, resample

__all__ = [
    "AudioFormat",
    "CHAPTER_FORMATS",
    "Chapter",
    "DEPRECATED_ALIASES",
    "EncodedSegment",
    "FILE_FORMATS",
    "FileEncoder",
    "FileLevels",
    "JSON_VARIANT_FORMATS",
    "JSON_WEBSOCKET_FORMATS",
    "LoudnessMeter",
    "MP3_PRIMING_SAMPLES",
    "MP3_RATES",
    "Metadata",
    "MeterState",
    "NegotiationResult",
    "OPUS_RATES",
    "RAW_WEBSOCKET_FORMATS",
    "Representation",
    "SEGMENTED",
    "STREAMING_FORMATS",
    "SegmentEncoder",
    "SegmentJoiner",
    "StreamEncoder",
    "StreamResampler",
    "apply_gain_db",
    "decoded_blocks",
    "encode_rate",
    "encode_whole",
    "fade_edges",
    "float_to_int16",
    "frame_size",
    "from_audio_format_param",
    "from_name",
    "gated_loudness",
    "integrated_loudness",
    "join_skip",
    "joined_loudness",
    "limit_true_peak",
    "lin2ulaw",
    "loudness_normalize",
    "measure_file",
    "mp3_encode_rate",
    "negotiate",
    "normalization_gain_db",
    "normalize",
    "not_acceptable_message",
    "open_encoder",
    "open_file_encoder",
    "opus_encode_rate",
    "patch_wav_sizes",
    "resample",
    "segments_loudness",
    "supported_accept_list",
    "true_peak_level",
    "ulaw2lin",
    "wav_header",
]
