//===- MetadataFloats.h - the metadata's floats written as floats ---------===//
//
// JSON writes a float of integral value as an integer (`eps = 1.0` as 1);
// `info --json` prints the model's metadata with them as floats.
//
//===----------------------------------------------------------------------===//
#ifndef TXRT_DRIVER_METADATAFLOATS_H
#define TXRT_DRIVER_METADATAFLOATS_H

#include "formats/Json.h"

namespace txrt::driver {

/// Writes the float config items (metadata "float_configs"), the
/// optimizer's numbers and the initializers' `init_std` of the parsed
/// metadata `root` as floats.
void markMetadataFloats(Json &root);

} // namespace txrt::driver

#endif // TXRT_DRIVER_METADATAFLOATS_H
