package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/** Conversions between Java lists and Scala sequences, as Catalyst's constructors take them. */
final class Scala {
    private Scala() {
    }

    static <T> Seq<T> seq(List<T> list) {
        return CollectionConverters.asScala(list).toSeq();
    }

    static <T> List<T> list(scala.collection.Seq<T> seq) {
        return new ArrayList<>(CollectionConverters.asJava(seq));
    }
}
